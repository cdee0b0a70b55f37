package action

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// TestInstallRefusesASecondPackageOfARepository: installing a repository
// that another package installs, under another name, would put two nodes
// for it in the Lock; it is refused, naming that package and the way out,
// unless forced. The same package under its own name stays a no-op.
func TestInstallRefusesASecondPackageOfARepository(t *testing.T) {
	c := fakeCluster(t, pkgObj("Provider", "org-provider-nop", nopRepo+":v0.2.0", "org-provider-nop-aaa"))
	spec := installed.InstallSpec{Kind: "Provider", Name: "other-nop", Package: nopRepo + ":v0.4.0"}
	u, err := c.Dialect().Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	in := &Install{Cluster: c, Progress: io.Discard}
	_, _, err = in.Create(context.Background(), spec, u, false)
	const want = nopRepo + " is installed already as provider/org-provider-nop (" + nopRepo + ":v0.2.0): a second package of one repository puts two nodes for it in the Lock, and Crossplane then resolves no package's dependencies; use 'kubectl xpkg upgrade provider/org-provider-nop' to change its version, or pass --force to install it twice anyway"
	if err == nil || err.Error() != want {
		t.Fatalf("install of a second package of the repository: %v\nwant: %s", err, want)
	}
	if _, err := c.Get(context.Background(), "Provider", "other-nop"); err == nil {
		t.Error("the refused package was created")
	}

	same := installed.InstallSpec{Kind: "Provider", Name: "org-provider-nop", Package: nopRepo + ":v0.2.0"}
	if p, already, err := in.Create(context.Background(), same, u, false); err != nil || !already || p.Name != "org-provider-nop" {
		t.Errorf("the same package again: %v, already %v", err, already)
	}

	in.Force = true
	p, already, err := in.Create(context.Background(), spec, u, false)
	if err != nil || already || p.Name != "other-nop" || !strings.HasSuffix(p.Source, ":v0.4.0") {
		t.Errorf("forced: %v, already %v, %+v", err, already, p)
	}
}
