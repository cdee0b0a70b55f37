package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// airCanon is where the air-gap packages canonically live: a registry
// host that does not resolve. The connected side reaches it through an
// ImageConfig of its cluster (a pull-through arrangement); the
// air-gapped side only through the mirror.
const airCanon = "xpkg.airgap-e2e.invalid/"

// pushMultiPlatform pushes a package of kind as an index of a linux/amd64
// and a linux/arm64 image, as reg.Host/repo:tag, with deps ("kind repo
// constraint", repo under airCanon).
func pushMultiPlatform(t *testing.T, reg *testenv.Registry, kind, repo, tag string, deps ...string) {
	t.Helper()
	s := "apiVersion: meta.pkg.crossplane.io/v1\nkind: " + kind + "\nmetadata:\n  name: " + filepath.Base(repo) + "\n  annotations:\n    version: " + tag + "\n"
	if len(deps) > 0 {
		s += "spec:\n  dependsOn:\n"
		for _, d := range deps {
			f := strings.SplitN(d, " ", 3)
			s += "  - " + f[0] + ": " + airCanon + f[1] + "\n    version: \"" + f[2] + "\"\n"
		}
	}
	var images []fixture.PlatformImage
	for _, arch := range []string{"amd64", "arm64"} {
		p := v1.Platform{OS: "linux", Architecture: arch}
		img, err := fixture.ImageFor([]byte(s+"# "+arch+"\n"), p)
		if err != nil {
			t.Fatal(err)
		}
		images = append(images, fixture.PlatformImage{Platform: p, Image: img})
	}
	if err := fixture.Push(reg.Host+"/"+repo+":"+tag, fixture.Index(images...), remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
}

// airPackages: a configuration needs a function and a provider, the
// provider its family provider; the provider has a version the
// configuration excludes.
func airPackages(t *testing.T, reg *testenv.Registry) {
	pushMultiPlatform(t, reg, "Provider", "e2e/air/provider-family-air", "v1.0.0")
	pushMultiPlatform(t, reg, "Provider", "e2e/air/provider-family-air", "v1.2.0")
	for _, v := range []string{"v1.0.0", "v1.1.0", "v2.0.0"} {
		pushMultiPlatform(t, reg, "Provider", "e2e/air/provider-air-s3", v, "provider e2e/air/provider-family-air >=v0.0.0")
	}
	pushMultiPlatform(t, reg, "Function", "e2e/air/function-air", "v0.3.0")
	pushMultiPlatform(t, reg, "Configuration", "e2e/air/platform", "v1.0.0",
		"function e2e/air/function-air >=v0.1.0", "provider e2e/air/provider-air-s3 >=v1.0.0 <v2.0.0")
}

var airClosure = map[string]string{ // repository under airCanon → version chosen
	"e2e/air/platform":            "v1.0.0",
	"e2e/air/function-air":        "v0.3.0",
	"e2e/air/provider-air-s3":     "v1.1.0",
	"e2e/air/provider-family-air": "v1.2.0",
}

// TestMirrorAirGapped mirrors a configuration's closure of multi-platform
// packages from one registry to another, directly and through an OCI
// layout, then installs it on the real Crossplane from its canonical
// reference, whose host does not resolve, through the printed
// ImageConfigs alone.
func TestMirrorAirGapped(t *testing.T) {
	env, reg, c, _ := start(t)
	ctx := context.Background()
	airPackages(t, reg)
	dst := testenv.StartRegistry(t)
	ics := c.dyn.Resource(crossplane.ImageConfigGVR)
	upstream := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "ImageConfig",
		"metadata": map[string]any{"name": "airgap-upstream"},
		"spec": map[string]any{
			"matchImages":  []any{map[string]any{"type": "Prefix", "prefix": airCanon}},
			"rewriteImage": map[string]any{"prefix": reg.Host + "/"},
		},
	}}
	if _, err := ics.Create(ctx, upstream, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ics.Delete(ctx, "airgap-upstream", metav1.DeleteOptions{}) })
	x := clitest.New(t).WithEnv(env).WithLogin(dst.Host, dst.Username, dst.Password)
	root := airCanon + "e2e/air/platform:v1.0.0"
	through := []string{"--context", testenv.ContextAdmin}

	r := x.Run(append([]string{"mirror", root, "--to", dst.Host + "/mirror", "--dry-run", "-o", "json"}, through...)...).Succeeds(t)
	var plan struct {
		Packages []struct{ Package, Version, Digest, Destination string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &plan); err != nil {
		t.Fatalf("mirror --dry-run -o json: %v\n%s", err, r.Stdout)
	}
	if len(plan.Packages) != len(airClosure) {
		t.Fatalf("closure of %d packages, want %d: %s", len(plan.Packages), len(airClosure), r.Stdout)
	}
	for _, p := range plan.Packages {
		repo := strings.TrimPrefix(p.Package, airCanon)
		if airClosure[repo] != p.Version || p.Digest != headDigest(t, reg, reg.Host+"/"+repo+":"+p.Version) {
			t.Errorf("%s at %s (%s), want %s at the source's digest", p.Package, p.Version, p.Digest, airClosure[repo])
		}
	}
	r = x.Run(append([]string{"mirror", root, "--to", dst.Host + "/mirror", "--dry-run"}, through...)...).Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg mirror %s --to %s/mirror --dry-run\n%s%s", root, dst.Host, r.Stderr, r.Stdout)
	contains(t, "mirror --dry-run", r.Stdout, "PACKAGE", "CONSTRAINED BY", airCanon+"e2e/air/platform:v1.0.0 >=v1.0.0 <v2.0.0")
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(airCanon+"e2e/air/provider-air-s3") + `\s+v1\.1\.0\s+sha256:`).MatchString(r.Stdout) {
		t.Errorf("mirror --dry-run: provider-air-s3 not at v1.1.0:\n%s", r.Stdout)
	}

	r = x.Run(append([]string{"mirror", root, "--to", dst.Host + "/mirror", "--pull-secret", "airgap-mirror"}, through...)...).Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg mirror %s --to %s/mirror --pull-secret airgap-mirror\n%s%s", root, dst.Host, r.Stderr, r.Stdout)
	contains(t, "mirror", r.Stderr, "Mirrored 4 of 4 package(s) to "+dst.Host+"/mirror, each verified there by digest: 4 copied", "2 platform(s)")
	printed := r.Stdout
	contains(t, "mirror's ImageConfigs", printed, "kind: ImageConfig", "name: airgap-mirror")
	oneConfigPerRepository(t, printed, dst.Host+"/mirror/")
	sameDigests(t, reg, dst, "mirror")

	r = x.Run(append([]string{"mirror", root, "--to", dst.Host + "/mirror"}, through...)...).Succeeds(t)
	contains(t, "mirror again", r.Stderr, "0 copied (0 blob(s), 0 B sent; 0 blob(s) already there), 4 already there")

	layout := filepath.Join(t.TempDir(), "air")
	r = x.Run(append([]string{"mirror", root, "--to-layout", layout}, through...)...).Succeeds(t)
	if r.Stdout != "" {
		t.Errorf("a layout has no ImageConfig to print, got:\n%s", r.Stdout)
	}
	// The other side of the gap: no cluster, no source registry.
	r = x.Run("mirror", "--from-layout", layout, "--to", dst.Host+"/layout").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg mirror --from-layout air --to %s/layout\n%s%s", dst.Host, r.Stderr, r.Stdout)
	oneConfigPerRepository(t, r.Stdout, dst.Host+"/layout/")
	sameDigests(t, reg, dst, "layout")

	installThroughMirror(t, env, x, dst, printed)
	// A mirror of the running cluster: its Lock, at what runs, read through
	// its ImageConfigs (now the mirror's).
	r = x.Run("mirror", "--from-cluster", "--to", dst.Host+"/again", "--dry-run", "-o", "name").Succeeds(t)
	for repo, v := range airClosure {
		contains(t, "mirror --from-cluster", r.Stdout, airCanon+repo+":"+v+"\n")
	}
	x.Run("mirror", "--from-cluster", "--to", dst.Host+"/again").Succeeds(t)
	sameDigests(t, reg, dst, "again")

	siblingReadsUpstream(t, env, x, reg, ics, upstream)
}

// oneConfigPerRepository: the ImageConfigs printed match each mirrored
// repository alone (the bare repository: its tags, digests and version
// listing), rewritten to its copy under to, and nothing broader.
func oneConfigPerRepository(t *testing.T, printed, to string) {
	t.Helper()
	for repo := range airClosure {
		contains(t, "the ImageConfigs", printed, "- prefix: "+airCanon+repo+"\n", "  prefix: "+to+repo+"\n")
	}
	if n := strings.Count(printed, "rewriteImage:"); n != len(airClosure) {
		t.Errorf("%d rewrites, want one per mirrored repository (%d):\n%s", n, len(airClosure), printed)
	}
	if strings.Contains(printed, "prefix: "+airCanon+"e2e/air/\n") {
		t.Errorf("an ImageConfig redirects the whole organisation:\n%s", printed)
	}
}

// siblingReadsUpstream: with the mirror's ImageConfigs applied and the
// way upstream back, a package of the same organisation that was not
// mirrored installs from upstream, where it is, and outdated reads its
// versions there; the mirrored packages stay on the mirror.
func siblingReadsUpstream(t *testing.T, env *testenv.Env, x *clitest.Test, reg *testenv.Registry, ics dynamic.ResourceInterface, upstream *unstructured.Unstructured) {
	ctx := context.Background()
	pushMultiPlatform(t, reg, "Function", "e2e/air/function-other", "v0.1.0")
	upstream.SetResourceVersion("")
	if _, err := ics.Create(ctx, upstream, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "function/air-sibling", "--force", "--yes", "--wait=2m")
	})
	x.Run("install", "function", airCanon+"e2e/air/function-other:v0.1.0", "air-sibling", "--wait=5m").Succeeds(t)
	r := x.Run("describe", "function/air-sibling").Succeeds(t)
	contains(t, "describe the sibling", r.Stdout, "Resolved package:   "+reg.Host+"/e2e/air/function-other:v0.1.0")
	r = x.Run("outdated", "-o", "json").Succeeds(t)
	var rep struct {
		Items []struct{ Name, Latest, Error string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("outdated -o json: %v\n%s", err, r.Stdout)
	}
	for _, it := range rep.Items {
		if it.Name == "air-sibling" && (it.Latest != "v0.1.0" || it.Error != "") {
			t.Errorf("outdated reads the sibling's versions elsewhere: latest %q, error %q", it.Latest, it.Error)
		}
	}
	r = x.Run("describe", "provider/e2e-air-provider-air-s3").Succeeds(t)
	contains(t, "describe the mirrored provider", r.Stdout, "/mirror/e2e/air/provider-air-s3:v1.1.0")
}

// sameDigests: every package of the closure is at the destination under
// its tag, at the source's digest.
func sameDigests(t *testing.T, reg, dst *testenv.Registry, under string) {
	t.Helper()
	for repo, v := range airClosure {
		if src, got := headDigest(t, reg, reg.Host+"/"+repo+":"+v), headDigest(t, dst, dst.Host+"/"+under+"/"+repo+":"+v); src != got {
			t.Errorf("%s:%s is %s at the destination, %s at the source", repo, v, got, src)
		}
	}
}

// installThroughMirror removes the connected side's way to the canonical
// registry, applies the ImageConfigs mirror printed (and the Secret they
// name), and installs the configuration by its canonical reference.
func installThroughMirror(t *testing.T, env *testenv.Env, x *clitest.Test, dst *testenv.Registry, printed string) {
	ctx := context.Background()
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(crossplane.ImageConfigGVR).Delete(ctx, "airgap-upstream", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "imageconfigs.yaml")
	if err := os.WriteFile(file, []byte(printed), 0o600); err != nil {
		t.Fatal(err)
	}
	x.Kubectl("create", "secret", "docker-registry", "airgap-mirror", "-n", crossplane.Namespace,
		"--docker-server="+dst.Host, "--docker-username="+dst.Username, "--docker-password="+dst.Password).Succeeds(t)
	x.Kubectl("apply", "-f", file).Succeeds(t)
	t.Cleanup(func() {
		y := clitest.New(t).WithEnv(env)
		y.Run("uninstall", "configuration/airgap-platform", "--force", "--yes", "--wait=2m")
		for _, n := range []string{"provider/e2e-air-provider-air-s3", "provider/e2e-air-provider-family-air", "function/e2e-air-function-air"} {
			y.Run("uninstall", n, "--force", "--yes", "--wait=2m")
		}
		y.Kubectl("delete", "-f", file, "--ignore-not-found")
		y.Kubectl("delete", "secret", "airgap-mirror", "-n", crossplane.Namespace, "--ignore-not-found")
	})
	r := x.Run("install", "configuration", airCanon+"e2e/air/platform:v1.0.0", "airgap-platform", "--wait=5m").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg install configuration %se2e/air/platform:v1.0.0 airgap-platform --wait=5m\n%s%s", airCanon, r.Stderr, r.Stdout)
	c := cluster{t: t, dyn: dyn}
	c.healthy("configurations", "airgap-platform")
	for res, n := range map[string]string{"providers": "e2e-air-provider-air-s3", "functions": "e2e-air-function-air"} {
		if err := c.awaitHealthy(res, n, 3*time.Minute); err != nil {
			t.Error(err)
		}
	}
	if err := c.awaitHealthy("providers", "e2e-air-provider-family-air", 3*time.Minute); err != nil {
		t.Error(err)
	}
	r = x.Run("describe", "provider/e2e-air-provider-air-s3").Succeeds(t)
	contains(t, "describe the mirrored provider", r.Stdout, "Resolved package:   "+dst.Host+"/mirror/e2e/air/provider-air-s3:v1.1.0")
	// The provider's runtime runs its package image: from the mirror.
	deps, err := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(crossplane.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, d := range deps.Items {
		if strings.HasPrefix(d.GetName(), "e2e-air-provider-air-s3") {
			cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			for _, c := range cs {
				images = append(images, c.(map[string]any)["image"].(string))
			}
		}
	}
	if len(images) == 0 || !strings.HasPrefix(images[0], dst.Host+"/mirror/e2e/air/provider-air-s3") {
		t.Errorf("the provider's runtime runs %v, not the mirror's copy", images)
	}

}
