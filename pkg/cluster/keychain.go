package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// PullSecretKeychain reads image pull secrets (kubernetes.io/dockerconfigjson
// or dockercfg) from namespace, the way the package manager would use them,
// and returns a keychain of their credentials.
func (c *Cluster) PullSecretKeychain(ctx context.Context, namespace string, names []string) (authn.Keychain, error) {
	kc := dockerKeychain{}
	for _, n := range names {
		u, err := c.secret(ctx, namespace, n)
		if err != nil {
			return nil, fmt.Errorf("read package pull secret %s/%s: %w", namespace, n, err)
		}
		if err := kc.add(u); err != nil {
			return nil, fmt.Errorf("package pull secret %s/%s: %w", namespace, n, err)
		}
	}
	return kc, nil
}

// secret reads a Secret. Against a real API server it is read past the
// REST client, whose request log at -v=8 and above prints response
// bodies: a Secret's data (a registry password, base64-encoded) must not
// reach a log a user pastes into an issue.
func (c *Cluster) secret(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	if c.rest == nil {
		return c.dyn.Resource(secretsGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	hc, err := rest.HTTPClientFor(c.rest)
	if err != nil {
		return nil, err
	}
	u := strings.TrimSuffix(c.rest.Host, "/") + "/api/v1/namespaces/" + url.PathEscape(namespace) + "/secrets/" + url.PathEscape(name)
	body, err := getRaw(ctx, hc, u, "application/json")
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("read secret %s/%s: %w", namespace, name, err)
	}
	return obj, nil
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
