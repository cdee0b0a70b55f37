package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// completionHelperOnPath puts krew/kubectl_complete-xpkg and the plugin
// in a directory at the front of the session's PATH, as a user (or Krew
// and a symlink) would.
func completionHelperOnPath(t *testing.T, x *clitest.Test) {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	helper, err := os.ReadFile(filepath.Join(root, "krew", "kubectl_complete-xpkg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl_complete-xpkg"), helper, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(clitest.Binary(t), filepath.Join(dir, "kubectl-xpkg")); err != nil {
		t.Fatal(err)
	}
	x.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// completions runs kubectl's own completion of `kubectl xpkg args...`,
// which calls the helper, and returns the words offered.
func completions(t *testing.T, x *clitest.Test, args ...string) []string {
	t.Helper()
	r := x.Kubectl(append([]string{"__complete", "xpkg"}, args...)...).Succeeds(t)
	var words []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if w, _, _ := strings.Cut(l, "\t"); w != "" && !strings.HasPrefix(w, ":") {
			words = append(words, w)
		}
	}
	return words
}

func TestKubectlCompletesThroughTheHelper(t *testing.T) {
	env := testenv.Get(t)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": "completion-nop"},
		"spec":     map[string]any{"package": "example.org/provider-nop:v0.4.0"},
	}}
	ctx := context.Background()
	if _, err := dyn.Resource(providersGVR).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dyn.Resource(providersGVR).Delete(ctx, "completion-nop", metav1.DeleteOptions{}) })

	x := clitest.New(t).WithEnv(env)
	completionHelperOnPath(t, x)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{""}, []string{"install", "diff", "upgrade", "versions", "completion"}},
		{[]string{"up"}, []string{"upgrade"}},
		{[]string{"install", ""}, []string{"provider", "configuration", "function"}},
		{[]string{"describe", "completion-"}, []string{"completion-nop"}},
		{[]string{"upgrade", "provider/comp"}, []string{"provider/completion-nop"}},
		{[]string{"uninstall", "comp"}, []string{"completion-nop"}},
		{[]string{"get", "-o", ""}, []string{"wide", "json", "yaml", "name"}},
		{[]string{"diff", "--col"}, []string{"--color"}},
		{[]string{"diff", "--color", ""}, []string{"auto", "always", "never"}},
	} {
		got := completions(t, x, c.args...)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("kubectl xpkg %s<TAB>: %v lacks %q", strings.Join(c.args, " "), got, w)
			}
		}
	}
}
