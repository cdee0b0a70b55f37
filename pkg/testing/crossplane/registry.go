package crossplane

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// ImageConfigGVR is where Crossplane v2 reads per-registry settings.
var ImageConfigGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "imageconfigs"}

// registryCredentials names the Secret and the ImageConfig Start creates.
const registryCredentials = "xpkg-test-registry"

// configureRegistry gives Crossplane the environment registry's htpasswd
// credentials the way a cluster admin would: a dockerconfigjson Secret in
// Crossplane's namespace, and an ImageConfig that attaches it to every image
// under the registry. Unlike a package's packagePullSecrets, this reaches
// the dependencies Crossplane resolves and installs by itself too.
func (c *Crossplane) configureRegistry(ctx context.Context, reg *testenv.Registry) error {
	auth := base64.StdEncoding.EncodeToString([]byte(reg.Username + ":" + reg.Password))
	cfg, err := json.Marshal(map[string]any{
		"auths": map[string]any{reg.Host: map[string]string{
			"username": reg.Username, "password": reg.Password, "auth": auth,
		}},
	})
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: registryCredentials, Namespace: Namespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
	secrets := c.kube.CoreV1().Secrets(Namespace)
	_ = secrets.Delete(ctx, secret.Name, metav1.DeleteOptions{}) // a stale one from an earlier run
	if _, err := secrets.Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create registry pull secret: %w", err)
	}
	ic := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1beta1",
		"kind":       "ImageConfig",
		"metadata":   map[string]any{"name": registryCredentials},
		"spec": map[string]any{
			"matchImages": []any{map[string]any{"type": "Prefix", "prefix": reg.Host + "/"}},
			"registry": map[string]any{"authentication": map[string]any{
				"pullSecretRef": map[string]any{"name": registryCredentials},
			}},
		},
	}}
	ics := c.dyn.Resource(ImageConfigGVR)
	_ = ics.Delete(ctx, registryCredentials, metav1.DeleteOptions{})
	if _, err := ics.Create(ctx, ic, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ImageConfig for %s: %w", reg.Host, err)
	}
	c.RegistrySecret, c.ImageConfig = registryCredentials, registryCredentials
	return nil
}

// removeRegistryConfig deletes what configureRegistry created.
func (c *Crossplane) removeRegistryConfig(ctx context.Context) error {
	if c.ImageConfig == "" {
		return nil
	}
	var errs []error
	if err := c.dyn.Resource(ImageConfigGVR).Delete(ctx, c.ImageConfig, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	if err := c.kube.CoreV1().Secrets(Namespace).Delete(ctx, c.RegistrySecret, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	c.ImageConfig, c.RegistrySecret = "", ""
	return errors.Join(errs...)
}
