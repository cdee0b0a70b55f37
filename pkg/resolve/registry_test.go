package resolve

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

var (
	imageConfig = fakecluster.ImageConfig
	pullSecret  = fakecluster.PullSecret
)

// TestRegistryReadsThroughImageConfigs: the rewrite and the pull secret
// of the ImageConfigs apply as the package manager applies them, the
// user hears of it once per reference, and an ImageConfig's secret that
// cannot be read is said and read past.
func TestRegistryReadsThroughImageConfigs(t *testing.T) {
	c := fakecluster.New(
		imageConfig("local-mirror", "mirror.invalid/", "registry.corp:5000/mirror/", ""),
		imageConfig("corp-creds", "registry.corp:5000/", "", "corp-pull"),
		imageConfig("other-creds", "other.corp/", "", "gone"),
		pullSecret("corp-pull", "registry.corp:5000", "robot", "s3cret"),
	).Cluster()
	var said []string
	reg, err := NewRegistry(context.Background(), c, "crossplane-system", source.Options{Keychain: authn.NewMultiKeychain()}, true,
		func(s string) { said = append(said, s) })
	if err != nil {
		t.Fatal(err)
	}
	reg.OnResolve = func(r imageconfig.Resolution) { said = append(said, DescribeResolution(r)) }
	for range 2 {
		ref, so, err := reg.Locate(context.Background(), "mirror.invalid/org/p:v1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if ref != "registry.corp:5000/mirror/org/p:v1" {
			t.Errorf("read %s", ref)
		}
		r, _ := name.ParseReference(ref)
		a, err := so.Keychain.Resolve(r.Context())
		if err != nil {
			t.Fatal(err)
		}
		if cfg, _ := a.Authorization(); cfg == nil || cfg.Username != "robot" || cfg.Password != "s3cret" {
			t.Errorf("credentials for %s: %+v", ref, cfg)
		}
	}
	if want := "Reading mirror.invalid/org/p:v1 through ImageConfig local-mirror (as registry.corp:5000/mirror/org/p:v1), with the pull secret corp-pull of ImageConfig corp-creds"; len(said) != 1 || said[0] != want {
		t.Errorf("said %q; want once %q", said, want)
	}

	said = nil
	if _, _, err := reg.Locate(context.Background(), "other.corp/x:v1", nil); err != nil {
		t.Fatal(err)
	}
	if len(said) != 2 || !strings.Contains(said[1], `Warning: read package pull secret crossplane-system/gone`) || !strings.Contains(said[1], "reading with your own registry credentials") {
		t.Errorf("an ImageConfig secret that cannot be read: %q", said)
	}
	// A package's own pull secret must be readable, as before.
	if _, _, err := reg.Locate(context.Background(), "other.corp/x:v1", []string{"missing"}); err == nil || !strings.Contains(err.Error(), "crossplane-system/missing") {
		t.Errorf("a package pull secret that cannot be read: %v", err)
	}

	// --no-image-config: as written.
	off, err := NewRegistry(context.Background(), c, "crossplane-system", source.Options{}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ref, _, _ := off.Locate(context.Background(), "mirror.invalid/org/p:v1", nil); ref != "mirror.invalid/org/p:v1" {
		t.Errorf("--no-image-config read %s", ref)
	}
}
