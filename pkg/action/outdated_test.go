package action

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// countingRegistry is the in-memory registry, counting requests.
type countingRegistry struct {
	*fixture.Registry
	host   string
	pushes int
}

func newRegistry(t *testing.T) *countingRegistry {
	t.Helper()
	r := fixture.NewRegistry(t)
	return &countingRegistry{Registry: r, host: r.Host}
}

// push writes a small package under repo:tag, other content on every
// push (a tag pushed again names another digest), and returns its
// digest; deps are its dependsOn entries, "repository constraint" each.
func (r *countingRegistry) push(t *testing.T, repo, tag string, deps ...string) string {
	t.Helper()
	kind := "Provider"
	switch {
	case strings.Contains(repo, "configuration"):
		kind = "Configuration"
	case strings.Contains(repo, "function"):
		kind = "Function"
	}
	r.pushes++
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: meta.pkg.crossplane.io/v1\nkind: %s\nmetadata:\n  name: %s\n  annotations:\n    push: %q\nspec:\n  dependsOn: [", kind, path.Base(repo), fmt.Sprint(r.pushes))
	for i, d := range deps {
		dep, constraint, _ := strings.Cut(d, " ")
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{provider: %q, version: %q}", dep, constraint)
	}
	b.WriteString("]\n")
	img, err := fixture.Image([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Push(r.host+"/"+repo+":"+tag, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d.String()
}

func pkgObj(kind, name, ref, rev string) *unstructured.Unstructured {
	return obj("pkg.crossplane.io/v1", kind, name, map[string]any{
		"spec":   map[string]any{"package": ref},
		"status": map[string]any{"currentRevision": rev},
	})
}

func withPullSecret(u *unstructured.Unstructured, name string) *unstructured.Unstructured {
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": name}}, "spec", "packagePullSecrets")
	return u
}

// revName is the package manager's revision name for a digest (Crossplane
// v2.3's, for a package at its first generation).
func revName(pkg, digest string) string {
	return pkgmanager.RevisionNameFor(pkgmanager.V23, pkg, strings.TrimPrefix(digest, "sha256:"), 1)
}

// TestOutdated runs under the revision names of both release lines:
// v2.4's hash the digest with the package's generation, which no field
// holds, so a digest is verified against the name, not read from it.
func TestOutdated(t *testing.T) {
	for _, rel := range pkgmanager.Releases {
		t.Run(string(rel), func(t *testing.T) { testOutdated(t, rel) })
	}
}

func testOutdated(t *testing.T, rel pkgmanager.Release) {
	// Packages at generation 3: edited twice since their revision was
	// made at generation 2.
	revName := func(pkg, digest string) string {
		return pkgmanager.RevisionNameFor(rel, pkg, strings.TrimPrefix(digest, "sha256:"), 2)
	}
	pkgObj := func(kind, name, ref, rev string) *unstructured.Unstructured {
		u := pkgObj(kind, name, ref, rev)
		u.SetGeneration(3)
		return u
	}
	reg := newRegistry(t)
	h := reg.host
	// provider-a: v1.0.0 runs; v1.1.0 and a pre-release are newer.
	a10 := reg.push(t, "org/provider-a", "v1.0.0")
	reg.push(t, "org/provider-a", "v1.1.0")
	reg.push(t, "org/provider-a", "v1.2.0-rc.1")
	// provider-b: held below v2 by the configuration; v1.0.0 runs, but its
	// tag was pushed over since.
	b10 := reg.push(t, "org/provider-b", "v1.0.0")
	reg.push(t, "org/provider-b", "v1.5.0")
	reg.push(t, "org/provider-b", "v2.0.0")
	b10now := reg.push(t, "org/provider-b", "v1.0.0")
	// configuration-c: pinned by digest, a newer tag exists.
	c10 := reg.push(t, "org/configuration-c", "v1.0.0")
	reg.push(t, "org/configuration-c", "v1.1.0")
	pinned := h + "/org/configuration-c:v1.0.0@" + c10

	c := fakeCluster(t,
		pkgObj("Provider", "provider-a", h+"/org/provider-a:v1.0.0", revName("provider-a", a10)),
		pkgObj("Provider", "provider-b", h+"/org/provider-b:v1.0.0", revName("provider-b", b10)),
		pkgObj("Configuration", "configuration-c", pinned, revName("configuration-c", c10)),
		pkgObj("Configuration", "configuration-d", h+"/org/configuration-c@"+c10, revName("configuration-d", c10)),
		pkgObj("Function", "function-gone", h+"/org/function-gone:v1.0.0", "function-gone-000000000000"),
		withPullSecret(pkgObj("Function", "function-secret", h+"/org/function-secret:v1.0.0", "function-secret-000000000000"), "missing"),
		lock(
			map[string]any{"name": revName("configuration-c", c10), "source": h + "/org/configuration-c", "version": c10,
				"dependencies": []any{map[string]any{"package": h + "/org/provider-b", "constraints": ">=v1.0.0 <v2.0.0", "type": "Provider"}}},
			map[string]any{"name": revName("configuration-d", c10), "source": h + "/org/configuration-c", "version": c10},
			map[string]any{"name": revName("provider-a", a10), "source": h + "/org/provider-a", "version": "v1.0.0"},
			map[string]any{"name": revName("provider-b", b10), "source": h + "/org/provider-b", "version": "v1.0.0"},
		),
	)
	od := &Outdated{Registry: &resolve.Registry{Cluster: c, XPNamespace: "crossplane-system"}}
	items, _, err := od.Items(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Item{}
	for _, it := range items {
		byName[it.Name] = it
	}
	check := func(name, current, wanted, latest string, drifted, pinned bool) {
		t.Helper()
		it := byName[name]
		if it == nil {
			t.Fatalf("no row for %s", name)
		}
		if it.Current != current || it.Wanted != wanted || it.Latest != latest || it.Drifted != drifted || it.Pinned != pinned {
			t.Errorf("%s: current %q wanted %q latest %q drifted %v pinned %v; want %q %q %q %v %v (%s)",
				name, it.Current, it.Wanted, it.Latest, it.Drifted, it.Pinned, current, wanted, latest, drifted, pinned, it.Error)
		}
	}
	check("provider-a", "v1.0.0", "v1.1.0", "v1.1.0", false, false)
	check("provider-b", "v1.0.0", "v1.5.0", "v2.0.0", true, false)
	check("configuration-c", "v1.0.0", "v1.1.0", "v1.1.0", false, true)
	check("configuration-d", c10, c10, "v1.1.0", false, true)
	if it := byName["provider-a"]; it.Digest != a10 || !it.Moves() {
		t.Errorf("provider-a runs %q (want %s), moves %v", it.Digest, a10, it.Moves())
	}
	if it := byName["provider-b"]; it.TagDigest != b10now || it.Digest != "" ||
		len(it.HeldBy) != 1 || it.HeldBy[0].By != "configuration/configuration-c" || it.HeldBy[0].Constraint != ">=v1.0.0 <v2.0.0" {
		t.Errorf("provider-b: tag names %s (want %s), runs %q, held by %+v", it.TagDigest, b10now, it.Digest, it.HeldBy)
	}
	if it := byName["configuration-c"]; it.Digest != c10 || !it.Moves() || it.TagDigest != "" {
		t.Errorf("a package pinned as tag@digest runs %q, moves %v, tag read %q", it.Digest, it.Moves(), it.TagDigest)
	}
	if it := byName["configuration-d"]; it.Digest != c10 || it.Moves() {
		t.Errorf("a package pinned by digest alone runs %q and moves %v", it.Digest, it.Moves())
	}
	if it := byName["function-gone"]; it.Error == "" || it.Moves() || !strings.Contains(it.Error, "function-gone") {
		t.Errorf("a repository that cannot be read: %+v", it)
	}
	if it := byName["provider-a"]; it.Error != "" {
		t.Errorf("one unreadable repository marks the others: %s", it.Error)
	}
	if it := byName["function-secret"]; !strings.Contains(it.Error, "read package pull secret crossplane-system/missing") {
		t.Errorf("a pull secret that cannot be read: %+v", it)
	}

	// With --pre, provider-a may go to the pre-release.
	od.Pre = true
	items, _, _ = od.Items(context.Background(), "Provider")
	for _, it := range items {
		if it.Name == "provider-a" && it.Wanted != "v1.2.0-rc.1" {
			t.Errorf("--pre: provider-a wants %s", it.Wanted)
		}
		if it.Kind != "Provider" {
			t.Errorf("KIND Provider lists %s", it)
		}
		// The configuration that holds provider-b is named as installed,
		// though configurations are not listed.
		if it.Name == "provider-b" && (len(it.HeldBy) != 1 || it.HeldBy[0].By != "configuration/configuration-c") {
			t.Errorf("provider-b is held by %+v", it.HeldBy)
		}
	}
}

// TestOutdatedRequests: one LIST per package kind, one of provider
// revisions (their family labels) and one Lock GET; one
// tag list and at most one manifest HEAD per distinct repository, however
// many packages share it.
func TestOutdatedRequests(t *testing.T) {
	reg := newRegistry(t)
	h := reg.host
	var objs []runtime.Object
	var lockPkgs []map[string]any
	digests := map[string]string{}
	for i := range 12 {
		repo := "org/p" + string(rune('a'+i%4)) // 4 repositories, 3 packages each
		d, ok := digests[repo]
		if !ok {
			d = reg.push(t, repo, "v1.0.0")
			digests[repo] = d
		}
		n := "pkg-" + string(rune('a'+i))
		objs = append(objs, pkgObj([]string{"Provider", "Configuration", "Function"}[i%3], n, h+"/"+repo+":v1.0.0", revName(n, d)))
		lockPkgs = append(lockPkgs, map[string]any{"name": revName(n, d), "source": h + "/" + repo, "version": "v1.0.0"})
	}
	var us []*unstructured.Unstructured
	for _, o := range objs {
		us = append(us, o.(*unstructured.Unstructured))
	}
	us = append(us, lock(lockPkgs...))
	for repo := range digests {
		reg.push(t, repo, "v1.1.0") // each package would move: its meta object is read
	}
	c, fake := fakeClusterDyn(t, us...)
	fake.ClearActions()
	reg.Reset()
	items, _, err := (&Outdated{Registry: &resolve.Registry{Cluster: c}}).Items(context.Background(), "")
	if err != nil || len(items) != 12 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	var api []string
	for _, a := range fake.Actions() {
		api = append(api, a.GetVerb()+" "+a.GetResource().Resource)
		if g, ok := a.(k8stesting.GetAction); ok && g.GetName() != "lock" {
			t.Errorf("GET %s/%s", a.GetResource().Resource, g.GetName())
		}
	}
	slices.Sort(api)
	if want := "get locks,list configurations,list functions,list providerrevisions,list providers"; strings.Join(api, ",") != want {
		t.Errorf("API requests: %v; want %s", api, want)
	}
	for _, r := range []string{"pa", "pb", "pc", "pd"} {
		if n := reg.Count("GET", "/org/"+r+"/tags/list"); n != 1 {
			t.Errorf("%s: %d tag lists", r, n)
		}
		if n := reg.Count("HEAD", "/org/"+r+"/manifests/v1.0.0"); n != 1 {
			t.Errorf("%s: %d manifest HEADs", r, n)
		}
	}
	// One reader per repository: the HEAD and the read of the version a
	// package would move to reuse the tag list's connection and
	// authentication, so /v2/ is asked once per repository.
	for _, r := range []string{"pa", "pb", "pc", "pd"} {
		if n := reg.Count("GET", "/org/"+r+"/manifests/v1.1.0"); n != 1 {
			t.Errorf("%s: %d reads of v1.1.0's manifest", r, n)
		}
	}
	if n := reg.Count("GET", "/v2/"); n != 4 {
		t.Errorf("%d registry pings for 4 repositories", n)
	}
	for _, it := range items {
		if it.Drifted || it.Digest == "" {
			t.Errorf("%s: drifted %v, digest %q", it.Name, it.Drifted, it.Digest)
		}
	}
}

func TestDependenciesFirst(t *testing.T) {
	it := func(repo string) *Item { return &Item{Name: repo, repo: "r.example.org/" + repo} }
	cfg, prov, fn, other := it("r/cfg"), it("r/prov"), it("r/fn"), it("r/other")
	lk := []installed.LockPackage{
		{Source: "r.example.org/r/cfg", Dependencies: []installed.LockDependency{{Package: "r.example.org/r/mid"}, {Package: "r.example.org/r/fn"}}},
		{Source: "r.example.org/r/mid", Dependencies: []installed.LockDependency{{Package: "r.example.org/r/prov"}}},
	}
	var got []string
	for _, i := range dependenciesFirst([]*Item{cfg, other, prov, fn}, lk) {
		got = append(got, i.Name)
	}
	// prov comes before cfg through r/mid, which does not move.
	if want := "r/prov,r/fn,r/cfg,r/other"; strings.Join(got, ",") != want {
		t.Errorf("order %v; want %s", got, want)
	}
}

func TestPinnedFindings(t *testing.T) {
	holds := Holds([]installed.LockPackage{
		{Source: "r.example.org/r/cfg", Dependencies: []installed.LockDependency{{Package: "r.example.org/r/prov", Constraints: ">=v1.0.0"}}},
		{Source: "r.example.org/r/cfg2", Dependencies: []installed.LockDependency{{Package: "r.example.org/r/prov", Constraints: "sha256:" + strings.Repeat("a", 64)}}},
	}, nil, "r.example.org/r/prov")
	fs := diagnose.PinnedFindings(holds, "provider/prov", "r.example.org/r/prov:v1.1.0@sha256:"+strings.Repeat("b", 64))
	if len(fs) != 1 || fs[0].Severity != findings.Blocking || fs[0].Rule != findings.RulePinnedDependency || fs[0].Object != "r.example.org/r/cfg" ||
		!strings.Contains(fs[0].Message, "is recorded in the Lock as sha256:bbbb") {
		t.Errorf("pinned-dependency: %+v", fs)
	}
}

// pushSample builds a sample package of hack/testdata/packages and pushes it
// under repo:tag.
func (r *countingRegistry) pushSample(t *testing.T, sample, tag, repo string) {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	stream, err := fixture.Stream(filepath.Join(root, "hack", "testdata", "packages", sample, tag))
	if err != nil {
		t.Fatal(err)
	}
	img, err := fixture.Image(stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Push(r.host+"/"+repo+":"+tag, img); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeAll: the steps come dependencies first; a blocking finding in
// a later step stops the run there when it is planned again, after the
// steps before it, which stay done. The same whether the steps read the
// cluster directly or from one watch.
func TestUpgradeAll(t *testing.T) {
	for _, watch := range []bool{false, true} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) { testUpgradeAll(t, watch) })
	}
}

func testUpgradeAll(t *testing.T, watch bool) {
	reg := newRegistry(t)
	h := reg.host
	reg.pushSample(t, "provider-nop", "v0.2.1", "org/provider-nop")
	reg.pushSample(t, "provider-nop", "v0.4.0", "org/provider-nop")
	reg.pushSample(t, "configuration-aws-network", "v0.21.0", "org/configuration-aws-network")
	reg.pushSample(t, "configuration-aws-network", "v0.23.0", "org/configuration-aws-network")
	nop, cfg := h+"/org/provider-nop", h+"/org/configuration-aws-network"
	// Crossplane v1.10 runs: configuration-aws-network v0.23.0 needs
	// >=v1.14.1-0.
	xp := obj("apps/v1", "Deployment", "crossplane", map[string]any{})
	xp.SetNamespace("crossplane-system")
	xp.SetLabels(map[string]string{"app.kubernetes.io/version": "v1.10.0"})
	c := fakeCluster(t,
		// Listed first, the configuration must still come after the provider.
		pkgObj("Configuration", "network", cfg+":v0.21.0", "network-aaaaaaaaaaaa"),
		pkgObj("Provider", "nop", nop+":v0.2.1", "nop-bbbbbbbbbbbb"),
		lock(
			map[string]any{"name": "network-aaaaaaaaaaaa", "source": cfg, "version": "v0.21.0",
				"dependencies": []any{map[string]any{"package": nop, "constraints": ">=v0.2.0", "type": "Provider"}}},
			map[string]any{"name": "nop-bbbbbbbbbbbb", "source": nop, "version": "v0.2.1"},
		),
		xp,
	)
	ua := &UpgradeAll{
		Change:   &Change{Cluster: c, Limits: xpkg.DefaultLimits, XPNamespace: "crossplane-system"},
		Outdated: &Outdated{Registry: &resolve.Registry{Cluster: c, XPNamespace: "crossplane-system"}},
	}
	ctx := context.Background()
	if watch {
		stop, err := ua.Watch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
	}
	ps, err := ua.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, p := range ps.Steps {
		order = append(order, p.Package+" "+p.To)
	}
	if want := "provider/nop " + nop + ":v0.4.0,configuration/network " + cfg + ":v0.23.0"; strings.Join(order, ",") != want {
		t.Fatalf("steps %v; want %s", order, want)
	}
	if !ps.Blocking() || ps.Refused() == nil || ps.Refused().Plan.Package != "configuration/network" ||
		len(planFindings(ps.Steps[1], findings.RuleCrossplaneVersion)) != 1 || planFindings(ps.Steps[1], findings.RuleCrossplaneVersion)[0].Severity != findings.Blocking {
		t.Fatalf("the configuration's step does not block: %+v", ps.Steps[1].Findings)
	}

	var done, replanned []string
	err = ua.Apply(ctx, ps, StepEvents{
		Replanned: func(p *Plan) { replanned = append(replanned, p.Package) },
		Done:      func(s *Step, _ *installed.Package) { done = append(done, s.Plan.Package) },
	})
	var se *StepError
	if !errors.As(err, &se) || !se.Refused || se.Step.Plan.Package != "configuration/network" ||
		strings.Join(se.Done, ",") != "provider/nop" || len(se.NotRun) != 0 {
		t.Fatalf("apply: %v (%+v)", err, se)
	}
	if strings.Join(done, ",") != "provider/nop" || strings.Join(replanned, ",") != "configuration/network" {
		t.Errorf("done %v, planned again %v", done, replanned)
	}
	if p, _ := c.Get(ctx, "Provider", "nop"); p.Source != nop+":v0.4.0" {
		t.Errorf("the provider points at %s", p.Source)
	}
	if p, _ := c.Get(ctx, "Configuration", "network"); p.Source != cfg+":v0.21.0" {
		t.Errorf("the refused configuration points at %s", p.Source)
	}
}

// TestUpgradeAllPlansTheFirstStepAgain: a dependent that appears between
// the combined plan and its first step (another writer's install) stops
// the run with nothing changed, even forced: the approved plan did not
// have it.
func TestUpgradeAllPlansTheFirstStepAgain(t *testing.T) {
	reg := newRegistry(t)
	reg.pushSample(t, "provider-nop", "v0.2.1", "org/provider-nop")
	reg.pushSample(t, "provider-nop", "v0.4.0", "org/provider-nop")
	nop := reg.host + "/org/provider-nop"
	c, dyn := fakeClusterDyn(t,
		pkgObj("Provider", "nop", nop+":v0.2.1", "nop-bbbbbbbbbbbb"),
		lock(map[string]any{"name": "nop-bbbbbbbbbbbb", "source": nop, "version": "v0.2.1"}),
	)
	ua := &UpgradeAll{Force: true,
		Change:   &Change{Cluster: c, Limits: xpkg.DefaultLimits, XPNamespace: "crossplane-system"},
		Outdated: &Outdated{Registry: &resolve.Registry{Cluster: c, XPNamespace: "crossplane-system"}},
	}
	ctx := context.Background()
	ps, err := ua.Plan(ctx)
	if err != nil || len(ps.Steps) != 1 || ps.Blocking() {
		t.Fatalf("plan: %v, %+v", err, ps)
	}
	// Someone installs a configuration that needs nop below v0.3.0.
	l, _ := dyn.Resource(locksGVR).Get(ctx, "lock", metav1.GetOptions{})
	pkgs, _, _ := unstructured.NestedSlice(l.Object, "packages")
	pkgs = append(pkgs, map[string]any{"name": "late-cccccccccccc", "source": reg.host + "/org/late", "version": "v1.0.0",
		"dependencies": []any{map[string]any{"package": nop, "constraints": "<v0.3.0", "type": "Provider"}}})
	_ = unstructured.SetNestedSlice(l.Object, pkgs, "packages")
	if _, err := dyn.Resource(locksGVR).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = ua.Apply(ctx, ps, StepEvents{})
	var ce *cluster.ChangedError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "a new finding: ") || !strings.Contains(err.Error(), "excludes v0.4.0") {
		t.Fatalf("apply: %v", err)
	}
	if p, _ := c.Get(ctx, "Provider", "nop"); p.Source != nop+":v0.2.1" {
		t.Errorf("the provider points at %s", p.Source)
	}
}

// TestWantedChecksDependencies: a version whose own dependencies cannot
// be satisfied is not Wanted (the package manager would install it and
// leave it unhealthy); a dependency the new version constrains lower is
// held there; the verdict is the same whichever kind is asked.
func TestWantedChecksDependencies(t *testing.T) {
	reg := newRegistry(t)
	h := reg.host
	// provider-x v2.0.0 needs provider-dep >=v9.0.0, which no version is.
	x10 := reg.push(t, "org/provider-x", "v1.0.0")
	reg.push(t, "org/provider-x", "v1.1.0")
	reg.push(t, "org/provider-x", "v2.0.0", h+"/org/provider-dep >=v9.0.0")
	dep10 := reg.push(t, "org/provider-dep", "v1.0.0")
	reg.push(t, "org/provider-dep", "v1.1.0")
	// provider-y v1.1.0 needs a repository that does not exist.
	y10 := reg.push(t, "org/provider-y", "v1.0.0")
	reg.push(t, "org/provider-y", "v1.1.0", h+"/org/provider-missing >=v1.0.0")
	// configuration-z v1.1.0 needs provider-h below v1.5.0: provider-h,
	// which the Lock lets go to v1.8.0, is held at v1.4.0.
	z10 := reg.push(t, "org/configuration-z", "v1.0.0", h+"/org/provider-h >=v1.0.0")
	reg.push(t, "org/configuration-z", "v1.1.0", h+"/org/provider-h >=v1.0.0 <v1.5.0")
	h10 := reg.push(t, "org/provider-h", "v1.0.0")
	reg.push(t, "org/provider-h", "v1.4.0")
	reg.push(t, "org/provider-h", "v1.8.0")
	entry := func(name, digest, repo string, deps ...any) map[string]any {
		return map[string]any{"name": revName(name, digest), "source": h + "/" + repo, "version": "v1.0.0", "dependencies": deps}
	}
	c := fakeCluster(t,
		pkgObj("Provider", "provider-x", h+"/org/provider-x:v1.0.0", revName("provider-x", x10)),
		pkgObj("Provider", "provider-dep", h+"/org/provider-dep:v1.0.0", revName("provider-dep", dep10)),
		pkgObj("Provider", "provider-y", h+"/org/provider-y:v1.0.0", revName("provider-y", y10)),
		pkgObj("Configuration", "configuration-z", h+"/org/configuration-z:v1.0.0", revName("configuration-z", z10)),
		pkgObj("Provider", "provider-h", h+"/org/provider-h:v1.0.0", revName("provider-h", h10)),
		lock(
			entry("provider-x", x10, "org/provider-x"),
			entry("provider-dep", dep10, "org/provider-dep"),
			entry("provider-y", y10, "org/provider-y"),
			entry("configuration-z", z10, "org/configuration-z",
				map[string]any{"package": h + "/org/provider-h", "constraints": ">=v1.0.0", "type": "Provider"}),
			entry("provider-h", h10, "org/provider-h"),
		),
	)
	o := &Outdated{Registry: &resolve.Registry{Cluster: c, XPNamespace: "crossplane-system"}}
	for _, kind := range []string{"", "Provider"} {
		items, _, err := o.Items(context.Background(), kind)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]*Item{}
		for _, it := range items {
			got[it.Name] = it
		}
		check := func(name, wanted, blocked, reason, heldBy string) {
			t.Helper()
			it := got[name]
			if it == nil {
				if kind == "" || name != "configuration-z" {
					t.Errorf("%q: %s is not listed", kind, name)
				}
				return
			}
			var b, r, hb []string
			for _, x := range it.Blocked {
				b, r = append(b, x.Version), append(r, x.Reason)
			}
			for _, x := range it.HeldBy {
				hb = append(hb, x.By+" "+x.Constraint)
			}
			if it.Wanted != wanted || strings.Join(b, ",") != blocked || !strings.Contains(strings.Join(r, "; "), reason) || strings.Join(hb, ",") != heldBy {
				t.Errorf("%q: %s wants %s, blocked %v (%v), held by %v; want %s, blocked %s (%q), held by %q", kind, name, it.Wanted, b, r, hb, wanted, blocked, reason, heldBy)
			}
		}
		check("provider-x", "v1.1.0", "v2.0.0", "needs "+h+"/org/provider-dep >=v9.0.0, but provider/provider-dep moves only to v1.1.0", "")
		check("provider-dep", "v1.1.0", "", "", "")
		check("provider-y", "v1.0.0", "v1.1.0", "needs "+h+"/org/provider-missing >=v1.0.0, which is not installed and whose repository does not exist", "")
		check("configuration-z", "v1.1.0", "", "", "")
		check("provider-h", "v1.4.0", "", "", "configuration/configuration-z at v1.1.0 >=v1.0.0 <v1.5.0")
		if len(items) != map[string]int{"": 5, "Provider": 4}[kind] {
			t.Errorf("%q: %d items", kind, len(items))
		}
	}
}

// TestOutdatedFamilies: each provider's FAMILY from its running
// revision's label, and a family at two versions found.
func TestOutdatedFamilies(t *testing.T) {
	reg := newRegistry(t)
	h := reg.host
	var us []*unstructured.Unstructured
	var lockPkgs []map[string]any
	for _, p := range []struct{ name, repo, tag string }{
		{"provider-family-aws", "upbound/provider-family-aws", "v2.5.0"},
		{"provider-aws-s3", "upbound/provider-aws-s3", "v2.6.0"},
		{"provider-aws-ec2", "upbound/provider-aws-ec2", "v2.6.0"},
	} {
		d := reg.push(t, p.repo, p.tag)
		rev := revName(p.name, d)
		us = append(us, pkgObj("Provider", p.name, h+"/"+p.repo+":"+p.tag, rev))
		r := revision(p.name, rev, h+"/"+p.repo+":"+p.tag, 1, "Active")
		r.SetLabels(map[string]string{"pkg.crossplane.io/package": p.name, "pkg.crossplane.io/provider-family": "provider-family-aws"})
		us = append(us, r)
		lockPkgs = append(lockPkgs, map[string]any{"name": rev, "source": h + "/" + p.repo, "version": p.tag})
	}
	us = append(us, pkgObj("Function", "fn", h+"/upbound/fn:v1.0.0", "fn-abc"), lock(lockPkgs...))
	reg.push(t, "upbound/fn", "v1.0.0")
	o := &Outdated{Registry: &resolve.Registry{Cluster: fakeCluster(t, us...)}}
	items, _, err := o.Items(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	fam := map[string]string{}
	for _, it := range items {
		fam[it.Name] = it.Family
	}
	if fam["provider-aws-s3"] != "provider-family-aws" || fam["provider-family-aws"] != "provider-family-aws" || fam["fn"] != "" {
		t.Errorf("families: %v", fam)
	}
	fs := o.Findings()
	if len(fs) != 1 || fs[0].Rule != findings.RuleFamilySkew || !strings.Contains(fs[0].Message, "family provider-family-aws runs 2 versions") {
		t.Errorf("findings: %+v", fs)
	}
}
