package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// forEachRelease runs test against a stand-in package manager of each
// Crossplane release line, naming revisions after the images' real
// digests, as Crossplane does.
func forEachRelease(t *testing.T, test func(t *testing.T, l *lifecycle)) {
	for _, rel := range pkgmanager.Releases {
		t.Run(string(rel), func(t *testing.T) {
			env := testenv.Get(t)
			dyn, err := env.DynamicClient(testenv.ContextAdmin)
			if err != nil {
				t.Fatal(err)
			}
			mgr, err := pkgmanager.StartRelease(dyn, rel)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(mgr.Stop)
			reg := env.RequireRegistry(t)
			creds := source.Options{Keychain: authn.NewMultiKeychain(staticKeychain{reg.Username, reg.Password})}
			mgr.ResolveDigests(func(image string) (string, bool) {
				d, err := source.Digest(context.Background(), image, creds)
				return d, err == nil
			})
			test(t, &lifecycle{env: env, dyn: dyn, mgr: mgr})
		})
	}
}

// wideColumn is a column of get -o wide's row for name.
func wideColumn(t *testing.T, table, name, column string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(table), "\n")
	header := strings.Fields(lines[0])
	row := tableRow(table, name)
	for i, h := range header {
		if h == column && len(row) == len(header) {
			return row[i]
		}
	}
	t.Fatalf("get -o wide has no %s for %s:\n%s", column, name, table)
	return ""
}

// TestDigestsAndRollbackOnBothReleases: get -o wide and describe show a
// digest only when the pin verifies it against the revision's name (v2.4's
// name hashes the digest with the generation: it is no digest); a rollback
// reuses the old revision on v2.3 and makes a new one on v2.4, which also
// collects the oldest past the history limit; --to-revision works on both.
func TestDigestsAndRollbackOnBothReleases(t *testing.T) {
	forEachRelease(t, func(t *testing.T, l *lifecycle) {
		name := "digest-nop-" + strings.ReplaceAll(string(l.mgr.Release()), ".", "")
		old, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
		newer, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
		l.mgr.Manage(name, pkgmanager.Behaviour{})
		x := clitest.New(t).WithEnv(l.env)
		t.Cleanup(func() { x.Run("uninstall", "provider/"+name, "--force") })

		x.Run("install", old, name, "--wait=60s").Succeeds(t)
		first := l.mgr.RevisionName(name, old, 1)
		r := x.Run("get", "provider", name, "-o", "wide").Succeeds(t)
		if got := wideColumn(t, r.Stdout, name, "REVISION"); got != first {
			t.Fatalf("revision %s, want %s", got, first)
		}
		if d := wideColumn(t, r.Stdout, name, "DIGEST"); d != "<unknown>" {
			t.Errorf("an unpinned package's DIGEST is %s, want <unknown>", d)
		}
		contains(t, "describe", x.Run("describe", "provider/"+name).Succeeds(t).Stdout, "Digest:             <unknown>\n")

		x.Run("upgrade", name, "v0.4.0", "--pin", "--wait=60s").Succeeds(t)
		p := l.packageSource(t, name)
		digest := reference.Digest(p)
		if !strings.HasPrefix(p, newer+"@sha256:") {
			t.Fatalf("upgrade --pin wrote %s", p)
		}
		if d := wideColumn(t, x.Run("get", "provider", name, "-o", "wide").Succeeds(t).Stdout, name, "DIGEST"); d != digest {
			t.Errorf("a pinned package's DIGEST is %s, want %s", d, digest)
		}
		contains(t, "describe", x.Run("describe", "provider/"+name).Succeeds(t).Stdout, "Digest:             "+digest+"\n")

		x.Run("rollback", name, "--wait=60s").Succeeds(t)
		states := l.desiredStates(t, revisionsGVR.Resource, name)
		third := l.mgr.RevisionName(name, old, 3)
		want := map[string]string{first: "Active", l.mgr.RevisionName(name, p, 2): "Inactive"}
		if l.mgr.Release() == pkgmanager.V24 {
			// A new revision; the first one goes past the history limit.
			want = map[string]string{third: "Active", l.mgr.RevisionName(name, p, 2): "Inactive"}
		}
		if len(states) != len(want) || states[third] != want[third] || states[first] != want[first] {
			t.Errorf("after the rollback the revisions are %v, want %v", states, want)
		}
		contains(t, "describe after rollback", x.Run("describe", "provider/"+name).Succeeds(t).Stdout, "Digest:             <unknown>\n")

		x.Run("rollback", name, "--to-revision", "2", "--wait=60s").Succeeds(t)
		if got := l.packageSource(t, name); got != p {
			t.Errorf("rollback --to-revision 2 points at %s, want %s", got, p)
		}
	})
}

// TestManualActivationWaitEndsAtOnce: under Manual activation nothing
// activates a package's revision but its owner: install --wait ends at
// once, naming the command that does, on both releases.
func TestManualActivationWaitEndsAtOnce(t *testing.T) {
	forEachRelease(t, func(t *testing.T, l *lifecycle) {
		name := "manual-wait-" + strings.ReplaceAll(string(l.mgr.Release()), ".", "")
		ref, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
		l.mgr.Manage(name, pkgmanager.Behaviour{})
		x := clitest.New(t).WithEnv(l.env)
		t.Cleanup(func() { x.Run("uninstall", "provider/"+name, "--force") })
		r := x.Run("install", ref, name, "--manual-activation", "--wait=10m").Fails(t, 1)
		contains(t, "install --manual-activation --wait", r.Stderr, "error: provider/"+name+
			" activates revisions by hand (revisionActivationPolicy: Manual) and its revision "+l.mgr.RevisionName(name, ref, 1)+
			" is inactive: nothing will activate it; kubectl xpkg upgrade provider/"+name+" --activate --wait activates it\n")
		r = x.Run("upgrade", "provider/"+name, "--activate", "--wait=60s").Succeeds(t)
		contains(t, "activate", r.Stdout, "revision "+l.mgr.RevisionName(name, ref, 1)+" activated")
	})
}

// TestRuntimeAwaitingActivation: a safe-start provider whose runtime the
// v2.4 manager scaled to zero is healthy: install --wait ends saying why
// nothing runs, get -o wide and describe show RuntimeActive; v2.3 has no
// such condition.
func TestRuntimeAwaitingActivation(t *testing.T) {
	forEachRelease(t, func(t *testing.T, l *lifecycle) {
		name := "safe-start-" + strings.ReplaceAll(string(l.mgr.Release()), ".", "")
		ref, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
		l.mgr.Manage(name, pkgmanager.Behaviour{AwaitingActivation: true})
		x := clitest.New(t).WithEnv(l.env)
		t.Cleanup(func() { x.Run("uninstall", "provider/"+name, "--force") })
		r := x.Run("install", ref, name, "--wait=60s").Succeeds(t)
		get := x.Run("get", "provider", name, "-o", "wide").Succeeds(t).Stdout
		desc := x.Run("describe", "provider/"+name).Succeeds(t).Stdout
		note := installed.AwaitingActivationNote("provider/" + name)
		if l.mgr.Release() == pkgmanager.V23 {
			if rt := wideColumn(t, get, name, "RUNTIME"); rt != "<none>" || strings.Contains(r.Stderr, note) || strings.Contains(desc, "Runtime:  ") {
				t.Errorf("v2.3 has no RuntimeActive; RUNTIME %s, describe:\n%s", rt, desc)
			}
			return
		}
		contains(t, "install --wait", r.Stderr, note+"\n")
		if rt := wideColumn(t, get, name, "RUNTIME"); rt != "AwaitingActivation" {
			t.Errorf("RUNTIME %s, want AwaitingActivation", rt)
		}
		contains(t, "describe", desc, "Runtime:            AwaitingActivation (scaled to zero until one of its managed resource definitions is active)\n")
	})
}
