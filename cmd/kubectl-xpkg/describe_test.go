package main

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

var requestLine = regexp.MustCompile(`"Response" verb="(\w+)" url="https://[^/]+(/[^"?]*)`)

// apiRequests are the requests a -v=6 run logged, discovery left out.
func apiRequests(stderr string) []string {
	var out []string
	for _, m := range requestLine.FindAllStringSubmatch(stderr, -1) {
		if m[2] == "/api" || m[2] == "/apis" || regexp.MustCompile(`^/apis?/[^/]+(/[^/]+)?$`).MatchString(m[2]) {
			continue // discovery, answered from the cache on later runs
		}
		out = append(out, m[1]+" "+m[2])
	}
	return out
}

// TestDescribeRequestsDoNotGrowWithRevisions: describe reads the package,
// its revisions (one list), the Lock and the events, however many revisions
// the package has.
func TestDescribeRequestsDoNotGrowWithRevisions(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "describe-nop"
	// Revisions an earlier run against the same environment left behind
	// (they have no owner for garbage collection to follow).
	if err := l.dyn.Resource(revisionsGVR).DeleteCollection(context.Background(), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "pkg.crossplane.io/package=" + name}); err != nil {
		t.Fatal(err)
	}
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", ref, name, "--wait=60s").Succeeds(t)

	want := []string{"GET /apis/pkg.crossplane.io/v1/providers/" + name, "GET /apis/pkg.crossplane.io/v1/providerrevisions",
		"GET /apis/pkg.crossplane.io/v1beta1/locks/lock", "GET /api/v1/namespaces/default/events"}
	for _, revisions := range []int{1, 20, 301} {
		l.addRevisions(t, name, revisions)
		r := x.Run("describe", "provider/"+name, "-v=6").Succeeds(t)
		got := apiRequests(r.Stderr)
		if len(got) != len(want) || !sameSet(got, want) {
			t.Errorf("with %d revisions describe made %d requests:\n%v\nwant %v", revisions, len(got), got, want)
		}
		r = x.Run("describe", "provider/"+name).Succeeds(t)
		// Past 20 the newest 20 and the current one are listed, and the
		// rest counted.
		listed := revisions
		if revisions > 20 {
			listed = 21 // the current one is the oldest here
			contains(t, "describe", r.Stdout, fmt.Sprintf("  … and %d older (%d revisions: -o yaml lists them all)\n", revisions-listed, revisions))
		}
		if n := len(regexp.MustCompile(`(?m)^  `+name+`-`).FindAllString(r.Stdout, -1)); n != listed {
			t.Errorf("describe lists %d of %d revisions, want %d", n, revisions, listed)
		}
		if !regexp.MustCompile(`(?m)^  ` + pkgmanager.RevisionName(name, ref) + ` +1 `).MatchString(r.Stdout) {
			t.Errorf("describe does not list the current revision:\n%s", r.Stdout)
		}
	}
}

// addRevisions tops the package's revisions up to n, as old inactive ones.
func (l *lifecycle) addRevisions(t *testing.T, pkg string, n int) {
	t.Helper()
	have := len(l.revisions(t, pkg))
	for i := have; i < n; i++ {
		r := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderRevision",
			"metadata": map[string]any{"name": fmt.Sprintf("%s-old%02d", pkg, i), "labels": map[string]any{"pkg.crossplane.io/package": pkg}},
			"spec":     map[string]any{"image": "example.test/old:v0." + fmt.Sprint(i), "revision": int64(100 + i), "desiredState": "Inactive"},
		}}
		if _, err := l.dyn.Resource(revisionsGVR).Create(context.Background(), r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func sameSet(a, b []string) bool {
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
