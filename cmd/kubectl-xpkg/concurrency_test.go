package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestConcurrentInstalls runs 20 installs of distinct packages and 20 of
// one package at once against the real API server: each distinct one is
// installed exactly once, one of the same-package installs creates it and
// the others find it installed, and nothing is lost or duplicated.
func TestConcurrentInstalls(t *testing.T) {
	env := testenv.Get(t)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	x := clitest.New(t).WithEnv(env)
	const n = 20
	run := func(name func(i int) string, ref func(i int) string) []*clitest.Result {
		results := make([]*clitest.Result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i] = x.Run("install", "provider", ref(i), name(i)) })
		}
		wg.Wait()
		return results
	}
	t.Cleanup(func() {
		for i := range n {
			_ = dyn.Resource(providersGVR).Delete(context.Background(), fmt.Sprintf("conc-%d", i), metav1.DeleteOptions{})
		}
		_ = dyn.Resource(providersGVR).Delete(context.Background(), "conc-same", metav1.DeleteOptions{})
	})

	distinct := run(func(i int) string { return fmt.Sprintf("conc-%d", i) },
		func(i int) string { return fmt.Sprintf("example.org/conc/provider-%d:v1.0.0", i) })
	for i, r := range distinct {
		r.Succeeds(t)
		contains(t, "distinct install", r.Stdout, fmt.Sprintf("provider.pkg.crossplane.io/conc-%d created", i))
	}

	same := run(func(int) string { return "conc-same" }, func(int) string { return "example.org/conc/provider-same:v1.0.0" })
	created, already := 0, 0
	for _, r := range same {
		r.Succeeds(t)
		switch {
		case strings.Contains(r.Stdout, "provider.pkg.crossplane.io/conc-same created"):
			created++
		case strings.Contains(r.Stderr, "provider/conc-same is already installed from example.org/conc/provider-same:v1.0.0: nothing to do"):
			already++
		default:
			t.Errorf("same-package install said neither created nor already installed:\n%s%s", r.Stdout, r.Stderr)
		}
	}
	if created != 1 || already != n-1 {
		t.Errorf("same package: %d created, %d already installed; want 1 and %d", created, already, n-1)
	}

	l, err := dyn.Resource(providersGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, u := range l.Items {
		if strings.HasPrefix(u.GetName(), "conc-") {
			pkg, _, _ := unstructured.NestedString(u.Object, "spec", "package")
			seen[u.GetName()] = pkg
		}
	}
	if len(seen) != n+1 {
		t.Errorf("%d conc-* providers, want %d: %v", len(seen), n+1, seen)
	}
	for i := range n {
		if want := fmt.Sprintf("example.org/conc/provider-%d:v1.0.0", i); seen[fmt.Sprintf("conc-%d", i)] != want {
			t.Errorf("conc-%d installs %q, want %q", i, seen[fmt.Sprintf("conc-%d", i)], want)
		}
	}
}
