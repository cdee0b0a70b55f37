package crossplane

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecordRelease makes the record a cluster keeps of the Crossplane it
// runs: the Deployment crossplane in Namespace, for the package manager
// this package runs as a process, as Crossplane's Helm chart writes it
// (ReleaseDeployment), with the arguments it runs with (c.Args), so that a
// reader of the Deployment learns its flags too. It runs no pod (no
// replicas); remove deletes it again.
func (c *Crossplane) RecordRelease(ctx context.Context) (remove func(), err error) {
	deps := c.kube.AppsV1().Deployments(Namespace)
	if _, err := deps.Create(ctx, ReleaseDeployment(c.Version, c.Args...), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("record Crossplane %s as its Deployment: %w", c.Version, err)
	}
	return func() { _ = deps.Delete(context.Background(), "crossplane", metav1.DeleteOptions{}) }, nil
}

// ReleaseDeployment is the Deployment crossplane that Crossplane's Helm
// chart renders for release version ("v2.4.2") installed as the Helm
// release "crossplane" with default values but for args (--set
// args={...}, which templates/deployment.yaml puts after `core start`),
// without replicas: the labels of templates/_helpers.tpl
// (crossplane.labels) and templates/deployment.yaml, where the release
// packaging sets the chart's version and appVersion to the release without
// its v, so that app.kubernetes.io/version is "2.4.2", and the image tag is
// "v" + appVersion.
func ReleaseDeployment(version string, args ...string) *appsv1.Deployment {
	appVersion := strings.TrimPrefix(version, "v")
	selector := map[string]string{"app": "crossplane", "release": "crossplane"}
	labels := map[string]string{
		"app": "crossplane", "release": "crossplane",
		"helm.sh/chart":                "crossplane-" + appVersion,
		"app.kubernetes.io/managed-by": "Helm",
		"app.kubernetes.io/component":  "cloud-infrastructure-controller",
		"app.kubernetes.io/part-of":    "crossplane",
		"app.kubernetes.io/name":       "crossplane",
		"app.kubernetes.io/instance":   "crossplane",
		"app.kubernetes.io/version":    appVersion,
	}
	image := "xpkg.crossplane.io/crossplane/crossplane:v" + appVersion
	zero := int32(0)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "crossplane", Namespace: Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: "crossplane",
					InitContainers:     []corev1.Container{{Name: "crossplane-init", Image: image, Args: []string{"core", "init"}}},
					Containers:         []corev1.Container{{Name: "crossplane", Image: image, Args: append([]string{"core", "start"}, args...)}},
				},
			},
		},
	}
}
