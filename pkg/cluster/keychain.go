package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// PullSecretKeychain reads image pull secrets (kubernetes.io/dockerconfigjson
// or dockercfg) from namespace, the way the package manager would use them,
// and returns a keychain of their credentials.
func (c *Cluster) PullSecretKeychain(ctx context.Context, namespace string, names []string) (authn.Keychain, error) {
	kc := dockerKeychain{}
	for _, n := range names {
		u, err := c.dyn.Resource(secretsGVR).Namespace(namespace).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read package pull secret %s/%s: %w", namespace, n, err)
		}
		if err := kc.add(u); err != nil {
			return nil, fmt.Errorf("package pull secret %s/%s: %w", namespace, n, err)
		}
	}
	return kc, nil
}

// dockerKeychain maps registry hosts to credentials.
type dockerKeychain map[string]authn.AuthConfig

func (k dockerKeychain) add(u *unstructured.Unstructured) error {
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	raw, key := data[".dockerconfigjson"], "auths"
	if raw == "" {
		raw, key = data[".dockercfg"], ""
	}
	if raw == "" {
		return fmt.Errorf("it holds neither .dockerconfigjson nor .dockercfg")
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	entries := doc
	if key != "" {
		if err := json.Unmarshal(doc[key], &entries); err != nil {
			return err
		}
	}
	for host, e := range entries {
		var ac authn.AuthConfig
		if err := json.Unmarshal(e, &ac); err != nil {
			return err
		}
		if ac.Auth != "" && ac.Username == "" {
			if dec, err := base64.StdEncoding.DecodeString(ac.Auth); err == nil {
				ac.Username, ac.Password, _ = strings.Cut(string(dec), ":")
			}
		}
		k[registryHost(host)] = ac
	}
	return nil
}

func (k dockerKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if ac, ok := k[r.RegistryStr()]; ok {
		return authn.FromConfig(ac), nil
	}
	return authn.Anonymous, nil
}

// registryHost strips a scheme and path: docker config keys may be URLs.
func registryHost(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	host, _, _ := strings.Cut(s, "/")
	return host
}
