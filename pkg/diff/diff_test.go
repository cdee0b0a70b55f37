package diff

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

func read(t *testing.T, docs ...string) *xpkg.Package {
	t.Helper()
	p, err := xpkg.Read(strings.NewReader(strings.Join(docs, "---\n")), xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func crd(name string, versions string) string {
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\nspec:\n  versions:\n" + versions
}

const meta = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"

func TestCompare(t *testing.T) {
	old := read(t, meta,
		crd("widgets.example.org", "  - name: v1alpha1\n    served: true\n    storage: true\n  - name: v1beta1\n    served: true\n    storage: false\n"),
		crd("gadgets.example.org", "  - name: v1\n    served: true\n    storage: true\n"),
		crd("gizmos.example.org", "  - name: v1\n    served: true\n    storage: true\n"),
	)
	new := read(t, meta,
		crd("widgets.example.org", "  - name: v1beta1\n    served: true\n    storage: true\n  - name: v1\n    served: true\n    storage: false\n"),
		crd("gadgets.example.org", "  - name: v1\n    served: false\n    storage: true\n"),
		crd("doodads.example.org", "  - name: v1\n    served: true\n    storage: true\n"),
	)
	r := Compare(old, new)
	var got []string
	for _, c := range r.Changes {
		got = append(got, c.String())
	}
	want := []string{
		"CustomResourceDefinition gadgets.example.org version v1: no longer served [breaking, version-no-longer-served]",
		"CustomResourceDefinition gizmos.example.org: removed: the API it defines goes, with any object of it in the cluster [breaking, definition-removed]",
		"CustomResourceDefinition widgets.example.org version v1alpha1: removed [breaking, version-removed]",
		"CustomResourceDefinition widgets.example.org version v1: added [compatible, version-added]",
		"CustomResourceDefinition doodads.example.org: added [compatible, object-added]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !r.Breaking() {
		t.Error("report not breaking")
	}
	if same := Compare(old, old); len(same.Changes) != 0 || same.Breaking() {
		t.Errorf("a package differs from itself: %v", same.Changes)
	}
}
