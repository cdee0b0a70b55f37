package action

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// mirrorRegistry pushes packages of kind name:tag with the given
// dependencies ("kind repo version" each, repo relative to the registry).
type mirrorRegistry struct {
	t   *testing.T
	reg *fixture.Registry
}

func newMirrorRegistry(t *testing.T) *mirrorRegistry {
	return &mirrorRegistry{t: t, reg: fixture.NewRegistry(t)}
}

func (m *mirrorRegistry) push(kind, repo, tag string, deps ...string) {
	m.t.Helper()
	s := "# " + tag + "\napiVersion: meta.pkg.crossplane.io/v1\nkind: " + kind + "\nmetadata:\n  name: " + repo[strings.LastIndex(repo, "/")+1:] + "\n"
	if len(deps) > 0 {
		s += "spec:\n  dependsOn:\n"
		for _, d := range deps {
			f := strings.SplitN(d, " ", 3)
			s += fmt.Sprintf("  - %s: %s/%s\n    version: %q\n", f[0], m.reg.Host, f[1], f[2])
		}
	}
	m.reg.PushStream(m.t, repo+":"+tag, s)
}

func (m *mirrorRegistry) repo(r string) string { return m.reg.Host + "/" + r }

func (m *mirrorRegistry) plan(roots ...string) (*MirrorPlan, error) {
	mr := NewMirror(&Config{Limits: xpkg.DefaultLimits})
	mr.To = "mirror.example.com/xp"
	for i, r := range roots {
		roots[i] = m.repo(r)
	}
	return mr.Plan(context.Background(), roots)
}

func versionsOf(plan *MirrorPlan) map[string]string {
	out := map[string]string{}
	for _, p := range plan.Packages {
		out[p.Package[strings.Index(p.Package, "/")+1:]] = p.Version
	}
	return out
}

// TestMirrorClosureTwoLevels: a configuration needs a function and a
// provider, the provider a family provider; each range goes to the
// newest tag it admits, and the table says who constrains what.
func TestMirrorClosureTwoLevels(t *testing.T) {
	m := newMirrorRegistry(t)
	m.push("Provider", "org/provider-family", "v1.0.0")
	m.push("Provider", "org/provider-family", "v1.2.0")
	m.push("Provider", "org/provider-family", "v2") // no complete version: skipped
	for _, v := range []string{"v1.0.0", "v1.1.0", "v2.0.0"} {
		m.push("Provider", "org/provider-s3", v, "provider org/provider-family >=v0.0.0")
	}
	m.push("Function", "org/function-x", "v0.3.0")
	m.push("Configuration", "org/platform", "v1.0.0", "function org/function-x >=v0.1.0", "provider org/provider-s3 >=v1.0.0 <v2.0.0")
	plan, err := m.plan("org/platform:v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	got := versionsOf(plan)
	want := map[string]string{"org/platform": "v1.0.0", "org/function-x": "v0.3.0", "org/provider-s3": "v1.1.0", "org/provider-family": "v1.2.0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("closure: got %v, want %v", got, want)
	}
	order := []string{}
	for _, p := range plan.Packages {
		order = append(order, p.Package[strings.Index(p.Package, "/")+1:])
		if !strings.HasPrefix(p.Digest, "sha256:") {
			t.Errorf("%s has no digest: %q", p.Package, p.Digest)
		}
	}
	if strings.Join(order, " ") != "org/platform org/function-x org/provider-s3 org/provider-family" {
		t.Errorf("not breadth-first: %v", order)
	}
	s3 := plan.Packages[2]
	if len(s3.ConstrainedBy) != 1 || s3.ConstrainedBy[0].By != m.repo("org/platform:v1.0.0") || s3.Kind != "Provider" || s3.Root {
		t.Errorf("provider-s3: %+v", s3)
	}
	if s3.Destination != "mirror.example.com/xp/org/provider-s3:v1.1.0" {
		t.Errorf("destination %q", s3.Destination)
	}
}

// TestMirrorTakesEveryConstraint: a constraint met later (from the
// function) narrows the provider chosen from the first one met.
func TestMirrorTakesEveryConstraint(t *testing.T) {
	m := newMirrorRegistry(t)
	m.push("Provider", "org/provider-s3", "v1.0.0")
	m.push("Provider", "org/provider-s3", "v1.1.0")
	m.push("Function", "org/function-x", "v0.3.0", "provider org/provider-s3 <v1.1.0")
	m.push("Configuration", "org/platform", "v1.0.0", "provider org/provider-s3 >=v1.0.0", "function org/function-x >=v0.1.0")
	plan, err := m.plan("org/platform:v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if v := versionsOf(plan)["org/provider-s3"]; v != "v1.0.0" {
		t.Fatalf("provider-s3 at %s: every constraint admits only v1.0.0", v)
	}
	if n := len(plan.Packages[1].ConstrainedBy); n != 2 {
		t.Errorf("provider-s3 constrained by %d, want 2: %+v", n, plan.Packages[1].ConstrainedBy)
	}
}

// TestMirrorConflictsInTheResolversWords names both dependents.
func TestMirrorConflictsInTheResolversWords(t *testing.T) {
	m := newMirrorRegistry(t)
	m.push("Provider", "org/provider-s3", "v1.0.0")
	m.push("Provider", "org/provider-s3", "v2.0.0")
	m.push("Function", "org/function-x", "v0.3.0", "provider org/provider-s3 >=v2.0.0")
	m.push("Configuration", "org/platform", "v1.0.0", "provider org/provider-s3 <v2.0.0", "function org/function-x >=v0.1.0")
	_, err := m.plan("org/platform:v1.0.0")
	if err == nil {
		t.Fatal("a conflict resolved")
	}
	for _, want := range []string{
		"dependency (" + m.repo("org/provider-s3") + ") does not have a valid version that satisfies all constraints. Constraints: [<v2.0.0 >=v2.0.0]",
		m.repo("org/platform:v1.0.0") + " needs " + m.repo("org/provider-s3") + " <v2.0.0",
		m.repo("org/function-x:v0.3.0") + " needs " + m.repo("org/provider-s3") + " >=v2.0.0",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestMirrorDigestPins: a digest pins the dependency; two different
// digests, or a digest and a range, are the resolver's errors.
func TestMirrorDigestPins(t *testing.T) {
	m := newMirrorRegistry(t)
	m.push("Provider", "org/provider-s3", "v1.0.0")
	m.push("Provider", "org/provider-s3", "v1.1.0")
	d1 := m.digestOf("org/provider-s3:v1.0.0")
	d2 := m.digestOf("org/provider-s3:v1.1.0")
	m.push("Configuration", "org/pinned", "v1.0.0", "provider org/provider-s3 "+d1)
	plan, err := m.plan("org/pinned:v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	p := plan.Packages[1]
	if p.Version != d1 || p.Digest != d1 || p.Ref() != m.repo("org/provider-s3")+"@"+d1 || p.Destination != "mirror.example.com/xp/org/provider-s3@"+d1 {
		t.Fatalf("pinned dependency: %+v", p)
	}
	m.push("Function", "org/function-x", "v0.3.0", "provider org/provider-s3 "+d2)
	m.push("Configuration", "org/two", "v1.0.0", "provider org/provider-s3 "+d1, "function org/function-x >=v0.1.0")
	if _, err := m.plan("org/two:v1.0.0"); err == nil || !strings.Contains(err.Error(), "a dependency package has different digests in parent constraints") {
		t.Errorf("two digests: %v", err)
	}
	m.push("Function", "org/function-y", "v0.3.0", "provider org/provider-s3 >=v1.0.0")
	m.push("Configuration", "org/mixed", "v1.0.0", "provider org/provider-s3 "+d1, "function org/function-y >=v0.1.0")
	if _, err := m.plan("org/mixed:v1.0.0"); err == nil || !strings.Contains(err.Error(), "a dependency package has different types of parent constraints") {
		t.Errorf("a digest and a range: %v", err)
	}
}

func (m *mirrorRegistry) digestOf(ref string) string {
	m.t.Helper()
	d, err := source.Digest(context.Background(), m.repo(ref), source.Options{})
	if err != nil {
		m.t.Fatal(err)
	}
	return d
}

// TestMirrorRootsNeedAVersion and a root a dependent excludes.
func TestMirrorRoots(t *testing.T) {
	m := newMirrorRegistry(t)
	m.push("Provider", "org/provider-s3", "v1.0.0")
	m.push("Configuration", "org/platform", "v1.0.0", "provider org/provider-s3 >=v2.0.0")
	if _, err := m.plan("org/platform"); err == nil || !strings.Contains(err.Error(), "names no version") {
		t.Errorf("a root without a version: %v", err)
	}
	_, err := m.plan("org/platform:v1.0.0", "org/provider-s3:v1.0.0")
	if err == nil || !strings.Contains(err.Error(), "does not have a valid version that satisfies all constraints") {
		t.Errorf("a root its dependent excludes: %v", err)
	}
	if _, err := m.plan("org/platform:v1.0.0", "org/platform:v2.0.0"); err == nil || !strings.Contains(err.Error(), "named at two versions") {
		t.Errorf("one repository at two versions: %v", err)
	}
	_, err = m.plan("org/nothing:v1.0.0")
	if err == nil || !strings.Contains(err.Error(), "org/nothing:v1.0.0") {
		t.Errorf("a root that does not exist: %v", err)
	}
}

// TestMirrorImageConfigs: one rewrite per mirrored repository, of that
// repository alone, to its copy; Docker Hub's two spellings in one; the
// pull secret for the rewritten references; long names cut with a hash;
// two repositories that would collide are refused.
func TestMirrorImageConfigs(t *testing.T) {
	long := "ghcr.io/acme/" + strings.Repeat("very-long-", 6) + "configuration"
	pkgs := []*MirrorPackage{
		{Package: "xpkg.crossplane.io/crossplane-contrib/provider-family-aws", Version: "v1.0.0"},
		{Package: "xpkg.crossplane.io/crossplane-contrib/provider-aws-s3", Version: "v1.0.0"},
		{Package: "ghcr.io/acme/platform/configuration", Version: "v2.0.0"},
		{Package: "index.docker.io/acme/function-x", Version: "v0.1.0"},
		{Package: long, Version: "v1"},
	}
	ics := MirrorImageConfigs(pkgs, "registry.internal/xp/", "mirror-creds")
	var got []string
	for _, ic := range ics {
		spec := ic["spec"].(map[string]any)
		var matches []string
		for _, m := range spec["matchImages"].([]any) {
			matches = append(matches, m.(map[string]any)["prefix"].(string))
		}
		to := ""
		if rw, ok := spec["rewriteImage"].(map[string]any); ok {
			to = "→ " + rw["prefix"].(string)
		}
		if reg, ok := spec["registry"].(map[string]any); ok {
			to = "secret " + reg["authentication"].(map[string]any)["pullSecretRef"].(map[string]any)["name"].(string)
		}
		got = append(got, fmt.Sprintf("%s: %s %s", ic["metadata"].(map[string]any)["name"], strings.Join(matches, " "), to))
	}
	want := []string{
		"mirror-ghcr-io-acme-platform-configuration: ghcr.io/acme/platform/configuration → registry.internal/xp/acme/platform/configuration",
		"mirror-ghcr-io-acme-very-long-very-long-very-long-very-long-v-" + hashOf(long) + ": " + long + " → registry.internal/xp/" + strings.TrimPrefix(long, "ghcr.io/"),
		"mirror-index-docker-io-acme-function-x: index.docker.io/acme/function-x docker.io/acme/function-x → registry.internal/xp/acme/function-x",
		"mirror-xpkg-crossplane-io-crossplane-contrib-provider-aws-s3: xpkg.crossplane.io/crossplane-contrib/provider-aws-s3 → registry.internal/xp/crossplane-contrib/provider-aws-s3",
		"mirror-xpkg-crossplane-io-crossplane-contrib-provider-family-aws: xpkg.crossplane.io/crossplane-contrib/provider-family-aws → registry.internal/xp/crossplane-contrib/provider-family-aws",
		"mirror-registry-internal-xp-pull: registry.internal/xp/ secret mirror-creds",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ImageConfigs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := assignDestinations(pkgs, "registry.internal/xp"); err != nil || pkgs[0].Destination != "registry.internal/xp/crossplane-contrib/provider-family-aws:v1.0.0" {
		t.Errorf("destinations: %v %q", err, pkgs[0].Destination)
	}
	twins := []*MirrorPackage{{Package: "a.example.com/org/p", Version: "v1"}, {Package: "b.example.com/org/p", Version: "v1"}}
	if err := assignDestinations(twins, "registry.internal/xp"); err == nil || !strings.Contains(err.Error(), "would both be mirrored to registry.internal/xp/org/p") {
		t.Errorf("colliding repositories: %v", err)
	}
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// TestMirrorImageConfigsRedirectOnlyTheMirrored: the printed
// ImageConfigs, applied to a cluster that reaches its registry through an
// ImageConfig of its own and read back as the package manager reads them,
// send the mirrored repository to its copy in every form the package
// manager matches (a tag, a digest, the bare repository its resolver lists
// versions of), while the other packages of the same organisation still
// read where they did. (The ImageConfigs of one directory per registry
// sent every package of the organisation to a mirror that did not hold
// it.) A repository whose name begins with the mirrored one's is caught
// too: a plain prefix cannot end a name.
func TestMirrorImageConfigsRedirectOnlyTheMirrored(t *testing.T) {
	const org, to = "xpkg.example.org/crossplane-contrib/", "mirror.example.com/xp"
	objs := []*unstructured.Unstructured{imageConfig("upstream", "xpkg.example.org/", "proxy.example.org/", "")}
	for _, ic := range MirrorImageConfigs([]*MirrorPackage{{Package: org + "provider-nop", Version: "v0.4.0"}}, to, "mirror-creds") {
		objs = append(objs, &unstructured.Unstructured{Object: ic})
	}
	configs, err := fakeCluster(t, objs...).ImageConfigs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + strings.Repeat("a", 64)
	for ref, want := range map[string]string{
		org + "provider-nop:v0.4.0":           to + "/crossplane-contrib/provider-nop:v0.4.0",
		org + "provider-nop:v0.5.0":           to + "/crossplane-contrib/provider-nop:v0.5.0",
		org + "provider-nop@" + digest:        to + "/crossplane-contrib/provider-nop@" + digest,
		org + "provider-nop:v0.4.0@" + digest: to + "/crossplane-contrib/provider-nop:v0.4.0@" + digest,
		org + "provider-nop":                  to + "/crossplane-contrib/provider-nop",
		// The siblings read where they did.
		org + "function-patch-and-transform:v0.9.0": "proxy.example.org/crossplane-contrib/function-patch-and-transform:v0.9.0",
		org + "provider-helm":                       "proxy.example.org/crossplane-contrib/provider-helm",
		org + "provider-no:v1":                      "proxy.example.org/crossplane-contrib/provider-no:v1",
		"xpkg.example.org/other/provider-nop:v1":    "proxy.example.org/other/provider-nop:v1",
		// The limit of a prefix: sent to where its copy would be.
		org + "provider-nop-extra:v1": to + "/crossplane-contrib/provider-nop-extra:v1",
	} {
		res, err := imageconfig.Resolve(configs, ref)
		if err != nil || res.Resolved != want {
			t.Errorf("%s reads as %s (%v), want %s", ref, res.Resolved, err, want)
		}
	}
	if res, _ := imageconfig.Resolve(configs, org+"provider-nop:v0.4.0"); res.PullSecret != "mirror-creds" {
		t.Errorf("the copy's pull secret: %+v", res)
	}
}

// TestMirrorStrays: reading through the cluster, an installed package
// the ImageConfigs would send to the mirror without the mirror holding
// it is named: one whose repository's name begins with a mirrored one's,
// and one an older, broader mirror ImageConfig of the cluster sends to
// the same prefix; the mirrored package and an unrelated one are not.
func TestMirrorStrays(t *testing.T) {
	const org, to = "xpkg.example.org/crossplane-contrib/", "mirror.example.com/xp"
	c := fakeCluster(t,
		imageConfig("mirror-xpkg-example-org-old", "xpkg.example.org/old/", to+"/old/", ""),
		lock(
			map[string]any{"name": "nop-abc", "type": "Provider", "source": org + "provider-nop", "version": "v0.4.0"},
			map[string]any{"name": "nop-extra-abc", "type": "Provider", "source": org + "provider-nop-extra", "version": "v1.0.0"},
			map[string]any{"name": "pt-abc", "type": "Function", "source": org + "function-patch-and-transform", "version": "v0.9.0"},
			map[string]any{"name": "old-abc", "type": "Function", "source": "xpkg.example.org/old/function-x", "version": "v1.0.0"},
		))
	mr := NewMirror(&Config{cluster: c, Limits: xpkg.DefaultLimits})
	mr.To, mr.ThroughCluster = to, true
	plan := &MirrorPlan{To: to, Packages: []*MirrorPackage{{Package: org + "provider-nop", Version: "v0.4.0"}}}
	strays, err := mr.Strays(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range strays {
		got = append(got, s.Package+" "+s.Ref+" "+s.ImageConfig+" "+s.Resolved)
	}
	want := []string{
		"nop-extra-abc " + org + "provider-nop-extra:v1.0.0 mirror-xpkg-example-org-crossplane-contrib-provider-nop " + to + "/crossplane-contrib/provider-nop-extra:v1.0.0",
		"old-abc xpkg.example.org/old/function-x:v1.0.0 mirror-xpkg-example-org-old " + to + "/old/function-x:v1.0.0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("strays:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Not reading through the cluster: nothing to check.
	mr.ThroughCluster = false
	if strays, err := mr.Strays(context.Background(), plan); err != nil || len(strays) != 0 {
		t.Errorf("without the cluster: %v %v", strays, err)
	}
}

// TestMirrorFromCluster: the Lock's packages at the versions they run,
// each constrained as the Lock records, none of their meta objects read.
func TestMirrorFromCluster(t *testing.T) {
	m := newMirrorRegistry(t)
	m.push("Provider", "org/provider-s3", "v1.0.0")
	m.push("Provider", "org/provider-s3", "v1.1.0")
	m.push("Configuration", "org/platform", "v1.0.0", "provider org/provider-s3 >=v1.0.0")
	c := fakeCluster(t, lock(
		map[string]any{"name": "platform-abc", "type": "Configuration", "source": m.repo("org/platform"), "version": "v1.0.0",
			"dependencies": []any{map[string]any{"package": m.repo("org/provider-s3"), "constraints": ">=v1.0.0", "type": "Provider"}}},
		map[string]any{"name": "s3-def", "type": "Provider", "source": m.repo("org/provider-s3"), "version": "v1.0.0"},
	))
	m.reg.Reset()
	mr := NewMirror(&Config{cluster: c, NoImageConfig: true, Limits: xpkg.DefaultLimits})
	mr.To, mr.FromCluster = "mirror.example.com/xp", true
	plan, err := mr.Plan(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := versionsOf(plan); fmt.Sprint(got) != fmt.Sprint(map[string]string{"org/platform": "v1.0.0", "org/provider-s3": "v1.0.0"}) {
		t.Errorf("from the cluster: %v (the Lock runs provider-s3 v1.0.0, not the newest)", got)
	}
	s3 := plan.Packages[1]
	if !s3.Root || s3.Kind != "Provider" || len(s3.ConstrainedBy) != 1 || s3.ConstrainedBy[0].Constraint != ">=v1.0.0" {
		t.Errorf("provider-s3: %+v", s3)
	}
	if n := m.reg.Count("GET", "/blobs/"); n != 0 {
		t.Errorf("%d blobs read: the Lock records the dependencies", n)
	}
}

func TestCheckMirrorPrefix(t *testing.T) {
	for prefix, ok := range map[string]bool{
		"registry.example.com/crossplane": true, "registry.example.com": true, "localhost:5000/x/": true, "127.0.0.1:5000/m": true,
		"crossplane": false, "registry.example.com/crossplane:v1": false, "registry.example.com/x@sha256:abc": false, "": false, "Registry.example.com/UP": false,
	} {
		if err := CheckMirrorPrefix(prefix); (err == nil) != ok {
			t.Errorf("%q: %v", prefix, err)
		}
	}
}

// TestMirrorDependencyForms: the apiVersion/kind/package form of
// Crossplane v2 is followed as the deprecated provider: form is.
func TestMirrorDependencyForms(t *testing.T) {
	m := newMirrorRegistry(t)
	m.push("Function", "org/function-x", "v0.3.0")
	m.push("Provider", "org/provider-s3", "v1.0.0")
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: platform\nspec:\n  dependsOn:\n" +
		"  - apiVersion: pkg.crossplane.io/v1\n    kind: Function\n    package: " + m.repo("org/function-x") + "\n    version: \">=v0.1.0\"\n" +
		"  - configuration: " + m.repo("org/config-base") + "\n    version: \">=v1.0.0\"\n"
	m.reg.PushStream(t, "org/platform:v1.0.0", meta)
	m.push("Configuration", "org/config-base", "v1.0.0", "provider org/provider-s3 >=v1.0.0")
	plan, err := m.plan("org/platform:v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	got := versionsOf(plan)
	if want := map[string]string{"org/platform": "v1.0.0", "org/function-x": "v0.3.0", "org/config-base": "v1.0.0", "org/provider-s3": "v1.0.0"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("closure: %v, want %v", got, want)
	}
}
