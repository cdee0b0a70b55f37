package diff

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

func read(t testing.TB, docs ...string) *xpkg.Package {
	t.Helper()
	p, err := xpkg.Parse(strings.NewReader(strings.Join(docs, "\n---\n")), xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// flat lists a report's changes one per line, prefixed by the object.
func flat(r *Report) []string {
	var out []string
	for _, c := range r.Package {
		out = append(out, "package: "+c.String())
	}
	for _, o := range r.Objects {
		for _, c := range o.Changes {
			out = append(out, o.Label()+": "+c.String())
		}
	}
	return out
}

func crd(name string, versions string) string {
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name +
		"\nspec:\n  group: example.org\n  scope: Namespaced\n  names:\n    kind: Widget\n    plural: widgets\n  versions:\n" + versions
}

const meta = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"

func TestCompareVersions(t *testing.T) {
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
	want := []string{
		"CustomResourceDefinition gadgets.example.org: v1: no longer served [breaking, version-no-longer-served]",
		"CustomResourceDefinition gizmos.example.org: removed: the API it defines goes, with every object of it in the cluster [breaking, definition-removed]",
		"CustomResourceDefinition widgets.example.org: v1alpha1: version removed [breaking, version-removed]",
		"CustomResourceDefinition widgets.example.org: v1: version added [compatible, version-added]",
		"CustomResourceDefinition doodads.example.org: added [compatible, object-added]",
	}
	if got := flat(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !r.Breaking() || r.Summary.Added != 1 || r.Summary.Removed != 1 || r.Summary.Changed != 2 || r.Summary.Breaking != 3 {
		t.Errorf("summary: %+v", r.Summary)
	}
	if same := Compare(old, old); same.Different() || same.Breaking() || same.Summary.Unchanged != 3 {
		t.Errorf("a package differs from itself: %v %+v", flat(same), same.Summary)
	}
}

func TestFormattingIsNotADifference(t *testing.T) {
	a := read(t, meta, crd("widgets.example.org", "  - name: v1\n    served: true\n    storage: true\n"))
	b := read(t, meta, crd("widgets.example.org", "  - {name: v1, served: true,   storage: true} # same\n"))
	if r := Compare(a, b); r.Different() {
		t.Errorf("reformatted YAML reported as different: %v", flat(r))
	}
}
