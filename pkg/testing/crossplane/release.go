package crossplane

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecordRelease makes the record a cluster keeps of the Crossplane it
// runs: the Deployment crossplane in Namespace, labelled with the release
// as Crossplane's Helm chart labels it (app.kubernetes.io/version), for
// the package manager this package runs as a process. It runs no pod
// (no replicas); remove deletes it again.
func (c *Crossplane) RecordRelease(ctx context.Context) (remove func(), err error) {
	labels := map[string]string{"app": "crossplane", "app.kubernetes.io/name": "crossplane", "app.kubernetes.io/version": c.Version}
	zero := int32(0)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "crossplane", Namespace: Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "crossplane"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "crossplane"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "crossplane", Image: "xpkg.crossplane.io/crossplane/crossplane:" + c.Version}}},
			},
		},
	}
	deps := c.kube.AppsV1().Deployments(Namespace)
	if _, err := deps.Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("record Crossplane %s as its Deployment: %w", c.Version, err)
	}
	return func() { _ = deps.Delete(context.Background(), "crossplane", metav1.DeleteOptions{}) }, nil
}
