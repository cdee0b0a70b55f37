package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func sampleDir(t *testing.T, name, tag string) string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "hack", "testdata", "packages", name, tag)
}

// pushSample pushes a sample to the environment's registry and returns its
// reference and package.yaml.
func pushSample(t *testing.T, env *testenv.Env, name, tag string) (string, []byte) {
	t.Helper()
	reg := env.RequireRegistry(t)
	stream, err := source.DirStream(sampleDir(t, name, tag))
	if err != nil {
		t.Fatal(err)
	}
	img, err := fixture.Image(stream)
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/cli/" + name + ":" + tag
	if err := fixture.Push(ref, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
	return ref, stream
}

func TestExtractFromRegistryToStdout(t *testing.T) {
	env := testenv.Get(t)
	ref, want := pushSample(t, env, "provider-kubernetes", "v1.0.0")
	x := clitest.New(t).WithEnv(env)
	r := x.Run("extract", ref).Succeeds(t)
	if r.Stdout != string(want) {
		t.Errorf("stdout differs from package.yaml (%d vs %d bytes)", len(r.Stdout), len(want))
	}
	if !strings.Contains(r.Stderr, "Reading registry "+ref+"@sha256:") || !strings.Contains(r.Stderr, "base layer annotated in the manifest") {
		t.Errorf("stderr does not name the resolved reference and rule: %q", r.Stderr)
	}
	// Without the environment's credentials the registry refuses, in one line.
	r = clitest.New(t).Run("extract", ref).Fails(t, 1)
	if !strings.Contains(r.Stderr, "requires authentication") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("stderr = %q", r.Stderr)
	}
}

func TestExtractOutputs(t *testing.T) {
	dir := sampleDir(t, "provider-helm", "v1.4.0")
	x := clitest.New(t)
	out := t.TempDir()

	x.Run("extract", dir, "-o", filepath.Join(out, "p.yaml")).Succeeds(t)
	want, _ := source.DirStream(dir)
	if got, _ := os.ReadFile(filepath.Join(out, "p.yaml")); !bytes.Equal(got, want) {
		t.Errorf("-o FILE: %d bytes, want %d", len(got), len(want))
	}

	x.Run("extract", dir, "-o", filepath.Join(out, "split")+"/").Succeeds(t)
	entries, _ := os.ReadDir(filepath.Join(out, "split"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 8 || !slices.Contains(names, "crossplane.yaml") || !slices.Contains(names, "customresourcedefinition_releases.helm.crossplane.io.yaml") {
		t.Errorf("split files: %v", names)
	}
	r := x.Run("extract", dir, "-o", filepath.Join(out, "split")+"/").Fails(t, 1)
	if !strings.Contains(r.Stderr, "is not empty") {
		t.Errorf("splitting into a full directory: %q", r.Stderr)
	}

	r = x.Run("extract", dir, "-o", "json", "--only", "crds").Succeeds(t)
	var list struct {
		Kind  string
		Items []struct{ Kind string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || list.Kind != "List" || len(list.Items) != 7 {
		t.Fatalf("-o json --only crds: %v %+v", err, list)
	}

	r = x.Run("extract", dir, "--only", "meta").Succeeds(t)
	if !strings.HasPrefix(r.Stdout, "apiVersion: meta.pkg.crossplane.io/v1") || strings.Contains(r.Stdout, "---") {
		t.Errorf("--only meta: %q", r.Stdout)
	}

	x.Run("extract", dir, "--gzip", "-o", filepath.Join(out, "p.gz")).Succeeds(t)
	f, _ := os.Open(filepath.Join(out, "p.gz"))
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(zr); !bytes.Equal(got, want) {
		t.Error("--gzip content differs")
	}
}

// TestFailedExtractLeavesNothing: a corrupt layer is found only at the end
// of the read; the output file must not appear, nor any temporary file.
func TestFailedExtractLeavesNothing(t *testing.T) {
	stream, _ := source.DirStream(sampleDir(t, "provider-nop", "v0.4.0"))
	img, _ := fixture.Image(stream)
	layout := t.TempDir()
	if err := fixture.WriteLayout(layout, img); err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	d, _ := layers[0].Digest()
	blob := filepath.Join(layout, "blobs", "sha256", d.Hex)
	b, _ := os.ReadFile(blob)
	b[len(b)-1] ^= 0xff
	os.WriteFile(blob, b, 0o644)

	out := t.TempDir()
	for _, target := range []string{filepath.Join(out, "p.yaml"), filepath.Join(out, "split") + "/"} {
		r := clitest.New(t).Run("extract", layout, "-o", target).Fails(t, 1)
		if !strings.Contains(r.Stderr, "is corrupt") {
			t.Errorf("stderr = %q", r.Stderr)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a failed extract left %v behind", entries)
	}
}

func TestValidateExitCodes(t *testing.T) {
	good := sampleDir(t, "configuration-aws-network", "v0.23.0")
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "crossplane.yaml"), []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: bad\nspec:\n  dependsOn:\n  - provider: example/p\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "deploy.yaml"), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"), 0o644)
	x := clitest.New(t)

	r := x.Run("validate", good).Succeeds(t)
	if !strings.HasSuffix(r.Stdout, "1 package checked: 1 valid, 0 invalid, 0 unreadable\n") {
		t.Errorf("stdout = %q", r.Stdout)
	}
	r = x.Run("validate", good, bad).Fails(t, 1)
	for _, want := range []string{
		"invalid Configuration bad: 2 violations",
		"document 0 (Configuration bad): spec.dependsOn[0] has no version [dependency]",
		"document 1 (Deployment d): Deployment.apps is not allowed in a Configuration package",
		"2 packages checked: 1 valid, 1 invalid (2 violations), 0 unreadable",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = x.Run("validate", good, bad, filepath.Join(bad, "missing.xpkg"), "-o", "json").Fails(t, 2)
	var report struct {
		Packages []struct{ Status string }
		Summary  struct{ Valid, Invalid, Unreadable int }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || report.Summary.Unreadable != 1 || report.Summary.Invalid != 1 {
		t.Errorf("json report: %v %+v", err, report)
	}
}
