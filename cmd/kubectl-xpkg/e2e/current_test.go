package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// outdatedItem is one row of outdated -o json.
type outdatedItem struct {
	Name, Kind, Package, Current, Wanted, Latest string
	Drifted, Pinned                              bool
	Digest                                       string
	HeldBy                                       []struct{ By, Constraint string } `json:"heldBy"`
	Error                                        string
}

// outdatedRows reads outdated -o json, by package name.
func outdatedRows(t *testing.T, out string) map[string]outdatedItem {
	t.Helper()
	var d struct {
		Items []outdatedItem `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("outdated -o json: %v\n%s", err, out)
	}
	rows := map[string]outdatedItem{}
	for _, it := range d.Items {
		rows[it.Name] = it
	}
	return rows
}

// TestKeepingCurrent drives outdated, upgrade --all, digest pinning and tag
// drift against the real package manager: provider-nop at an old version
// under configuration-aws-network (which wants >=v0.2.0), and
// provider-stored, which configuration-stored caps below its newest tag.
func TestKeepingCurrent(t *testing.T) {
	env, reg, c, x := start(t)
	e2e := reg.Host + "/e2e/crossplane-contrib/"
	const (
		nop    = "e2e-crossplane-contrib-provider-nop"
		net    = "e2e-crossplane-contrib-configuration-aws-network"
		pt     = "e2e-crossplane-contrib-function-patch-and-transform"
		prov   = "e2e-crossplane-contrib-provider-stored"
		stored = "e2e-crossplane-contrib-configuration-stored"
	)
	auth := remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+net, "configuration/"+stored, "provider/"+nop, "provider/"+prov, "function/"+pt, "--force", "--yes", "--wait=2m")
	})

	x.Run("install", e2e+"provider-nop:v0.2.1", "--wait=5m").Succeeds(t)
	x.Run("install", e2e+"configuration-aws-network:v0.23.0", "--wait=5m").Succeeds(t)
	x.Run("install", e2e+"provider-stored:v1.0.0", "--wait=5m").Succeeds(t)
	x.Run("install", e2e+"configuration-stored:v1.0.0", "--wait=5m").Succeeds(t)

	r := x.Run("outdated").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg outdated\n%s", r.Stdout)
	r = x.Run("outdated", "providers", "-o", "wide").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg outdated providers -o wide\n%s", r.Stdout)
	contains(t, "outdated providers -o wide", r.Stdout, "configuration/"+stored+" >=v1.0.0 <v2.0.0")
	r = x.Run("outdated", "-o", "json").Succeeds(t)
	rows := outdatedRows(t, r.Stdout)
	row := func(name, current, wanted, latest string) {
		t.Helper()
		it, ok := rows[name]
		if !ok {
			t.Fatalf("outdated has no row for %s", name)
		}
		if it.Current != current || it.Wanted != wanted || it.Latest != latest || it.Drifted || it.Error != "" {
			t.Errorf("%s: current %s wanted %s latest %s drifted %v %s; want %s %s %s", name, it.Current, it.Wanted, it.Latest, it.Drifted, it.Error, current, wanted, latest)
		}
		if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(it.Digest) {
			t.Errorf("%s runs digest %q", name, it.Digest)
		}
	}
	row(nop, "v0.2.1", "v0.4.0", "v0.4.0")
	row(net, "v0.23.0", "v0.24.0", "v0.24.0")
	row(pt, "v0.10.8", "v0.10.8", "v0.10.8")
	row(prov, "v1.0.0", "v1.1.0", "v2.0.0")
	row(stored, "v1.0.0", "v1.0.0", "v1.0.0")
	if h := rows[prov].HeldBy; len(h) != 1 || h[0].By != "configuration/"+stored || h[0].Constraint != ">=v1.0.0 <v2.0.0" {
		t.Errorf("provider-stored is held by %+v", h)
	}

	// The combined plan: dependencies first, nothing blocking.
	r = x.Run("upgrade", "--all", "--dry-run", "-o", "json").Succeeds(t)
	var plans struct {
		Steps []struct {
			Package, To string
			Findings    []struct{ Rule, Severity string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &plans); err != nil {
		t.Fatalf("upgrade --all plan: %v\n%s", err, r.Stdout)
	}
	order := map[string]int{}
	for i, s := range plans.Steps {
		order[s.Package] = i + 1
		for _, f := range s.Findings {
			if f.Severity == "blocking" {
				t.Errorf("step %s: blocking %s", s.Package, f.Rule)
			}
		}
	}
	if len(plans.Steps) != 3 || order["provider/"+nop] == 0 || order["provider/"+nop] > order["configuration/"+net] || order["provider/"+prov] == 0 {
		t.Errorf("steps %+v: want provider-nop before configuration-aws-network, and provider-stored", plans.Steps)
	}

	r = x.Run("upgrade", "--all", "--wait=5m").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg upgrade --all --wait=5m\n%s%s", r.Stderr, r.Stdout)
	contains(t, "upgrade --all", r.Stdout, "provider/"+nop+" upgraded from v0.2.1 to v0.4.0",
		"configuration/"+net+" upgraded from v0.23.0 to v0.24.0", "provider/"+prov+" upgraded from v1.0.0 to v1.1.0")
	for res, want := range map[[2]string]string{
		{"providers", nop}:      e2e + "provider-nop:v0.4.0",
		{"configurations", net}: e2e + "configuration-aws-network:v0.24.0",
		{"providers", prov}:     e2e + "provider-stored:v1.1.0", // WANTED, not LATEST
	} {
		u := c.get(res[0], res[1])
		if src, _, _ := unstructured.NestedString(u.Object, "spec", "package"); src != want {
			t.Errorf("%s/%s points at %s, want %s", res[0], res[1], src, want)
		}
		c.healthy(res[0], res[1])
	}
	r = x.Run("outdated", "-o", "json").Succeeds(t)
	rows = outdatedRows(t, r.Stdout)
	row(nop, "v0.4.0", "v0.4.0", "v0.4.0")
	row(prov, "v1.1.0", "v1.1.0", "v2.0.0")
	r = x.Run("upgrade", "--all").Succeeds(t)
	contains(t, "upgrade --all with nothing to do", r.Stderr, "nothing to upgrade")

	// Pushing other content over the tag provider-nop runs is drift.
	old, err := name.ParseReference(e2e + "provider-nop:v0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(old, auth)
	if err != nil {
		t.Fatal(err)
	}
	over, _ := name.ParseReference(e2e + "provider-nop:v0.4.0")
	original, err := remote.Image(over, auth)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(over, img, auth); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Write(over, original, auth) })
	r = x.Run("outdated", "providers").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg outdated providers\n%s", r.Stdout)
	if !regexp.MustCompile(nop + `\s+Provider\s+v0.4.0\s+v0.4.0\s+v0.4.0\s+yes`).MatchString(r.Stdout) {
		t.Errorf("drift not reported:\n%s", r.Stdout)
	}
	if err := remote.Write(over, original, auth); err != nil {
		t.Fatal(err)
	}

	// --pin writes the digest the tag names (--force: provider-nop is
	// installed already, and install refuses a second package of one
	// repository without it).
	r = x.Run("install", e2e+"provider-nop:v0.4.0", "pinned-nop", "--pin", "--force", "--dry-run=server", "-o", "yaml").Succeeds(t)
	if !regexp.MustCompile(`package: ` + regexp.QuoteMeta(e2e+"provider-nop:v0.4.0@") + `sha256:[0-9a-f]{64}\n`).MatchString(r.Stdout) {
		t.Errorf("install --pin wrote:\n%s", r.Stdout)
	}
	c.gone("providers", "pinned-nop")

	// A package others depend on with a range cannot be pinned.
	r = x.Run("upgrade", prov, "v1.1.0", "--pin", "--dry-run").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg upgrade %s v1.1.0 --pin --dry-run\n%s%s", prov, r.Stdout, r.Stderr)
	r = x.Run("upgrade", prov, "v1.1.0", "--pin", "--dry-run", "-o", "json").Fails(t, 3)
	msg, who, _ := parsePlan(t, r.Stdout).finding(t, "pinned-dependency", "blocking")
	if who != "configuration/"+stored || !strings.Contains(msg, "which Crossplane does not match against a version range") {
		t.Errorf("pinned-dependency: %s (%s)", msg, who)
	}

	// Forced through, the package manager records the digest as the
	// provider's version in the Lock, and the configuration's range can
	// no longer be checked: it turns unhealthy, as the plan said.
	x.Run("upgrade", prov, "v1.1.0", "--pin", "--force").Succeeds(t)
	u, err := crossplane.WaitFor(context.Background(), c.dyn.Resource(gvr("configurations")), stored, 2*time.Minute, func(u *unstructured.Unstructured) error {
		if h := crossplane.Condition(u, "Healthy"); h["status"] != "False" || !strings.Contains(fmt.Sprint(h["message"]), "missing dependencies") {
			return fmt.Errorf("Healthy is %v", h)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the dependent of a pinned provider: %v", err)
	}
	t.Logf("configuration-stored after its dependency was pinned: %v", crossplane.Condition(u, "Healthy"))
	// Unpinned again, it recovers.
	x.Run("upgrade", prov, "v1.1.0", "--force").Succeeds(t)
	if _, err := crossplane.WaitFor(context.Background(), c.dyn.Resource(gvr("configurations")), stored, 2*time.Minute, crossplane.Ready); err != nil {
		t.Errorf("the dependent after the provider was unpinned: %v", err)
	}
}

// TestWantedLeavesUnmetDependencies: a newer version whose own dependency
// no version can meet (configuration-needs v1.1.0 needs provider-nop
// >=v9.0.0) is not WANTED, and upgrade --all does not move to it (the
// package manager would install it and leave it unhealthy): it says why,
// exits 0 and the configuration stays healthy where it was.
func TestWantedLeavesUnmetDependencies(t *testing.T) {
	env, reg, c, x := start(t)
	const (
		cfg = "needs"
		nop = "e2e-crossplane-contrib-provider-nop"
	)
	repo := reg.Host + "/e2e/needs/configuration-needs"
	nopRepo := reg.Host + "/e2e/crossplane-contrib/provider-nop"
	auth := remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})
	for tag, constraint := range map[string]string{"v1.0.0": ">=v0.2.0", "v1.1.0": ">=v9.0.0"} {
		img, err := fixture.Image(fmt.Appendf(nil, "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: configuration-needs\nspec:\n  dependsOn:\n  - provider: %s\n    version: %q\n", nopRepo, constraint))
		if err != nil {
			t.Fatal(err)
		}
		if err := fixture.Push(repo+":"+tag, img, auth); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "provider/"+nop, "--force", "--yes", "--wait=2m")
	})
	x.Run("install", "configuration", repo+":v1.0.0", cfg, "--wait=5m").Succeeds(t)

	r := x.Run("outdated", "-o", "json").Succeeds(t)
	var doc struct {
		Items []struct {
			Name, Current, Wanted, Latest string
			Blocked                       []struct{ Version, Reason string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("outdated -o json: %v\n%s", err, r.Stdout)
	}
	const why = "needs " + "%s >=v9.0.0, but provider/" + nop + " runs v0.4.0 and cannot move to a version that matches"
	found := false
	for _, it := range doc.Items {
		if it.Name != cfg {
			continue
		}
		found = true
		if it.Current != "v1.0.0" || it.Wanted != "v1.0.0" || it.Latest != "v1.1.0" || len(it.Blocked) != 1 ||
			it.Blocked[0].Version != "v1.1.0" || it.Blocked[0].Reason != fmt.Sprintf(why, nopRepo) {
			t.Errorf("outdated reports %s as %+v; want current and wanted v1.0.0, latest v1.1.0, v1.1.0 blocked: "+why, cfg, it, nopRepo)
		}
	}
	if !found {
		t.Fatalf("outdated lists no %s:\n%s", cfg, r.Stdout)
	}
	r = x.Run("outdated", "configurations", "-o", "wide").Succeeds(t)
	contains(t, "outdated -o wide", r.Stdout, "v1.1.0 "+fmt.Sprintf(why, nopRepo))

	r = x.Run("upgrade", "--all", "--wait=2m").Succeeds(t)
	contains(t, "upgrade --all", r.Stderr, "Not moving configuration/"+cfg+" to v1.1.0: it "+fmt.Sprintf(why, nopRepo))
	if strings.Contains(r.Stdout, "configuration/"+cfg+" upgraded") {
		t.Errorf("upgrade --all moved the configuration to a version whose dependency cannot be met:\n%s", r.Stdout)
	}
	u := c.get("configurations", cfg)
	if src, _, _ := unstructured.NestedString(u.Object, "spec", "package"); src != repo+":v1.0.0" {
		t.Errorf("configuration/%s points at %s", cfg, src)
	}
	c.healthy("configurations", cfg)
}
