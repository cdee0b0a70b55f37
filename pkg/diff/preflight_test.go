package diff

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// The reference: definedVersions and Preflight as they were written on
// parsed packages before Definitions, kept here to hold the new forms to
// the same answers.

func definedVersionsBefore(p *xpkg.Package) map[string][]apiVersion {
	m := map[string][]apiVersion{}
	for _, o := range p.Objects {
		if !isDefinition(o) {
			continue
		}
		vs := definitionVersions(o)
		m[o.Name()] = vs
		if claim, ok := specField(o, "claimNames").(map[string]any); ok {
			plural, _ := claim["plural"].(string)
			group, _ := specField(o, "group").(string)
			if plural != "" && group != "" {
				m[plural+"."+group] = vs
			}
		}
	}
	return m
}

func preflightBefore(old, new *xpkg.Package, stored map[string][]string) []Blocker {
	olds, news := definedVersionsBefore(old), definedVersionsBefore(new)
	var out []Blocker
	for _, crd := range slices.Sorted(maps.Keys(olds)) {
		nvs, defined := news[crd]
		for _, sv := range stored[crd] {
			b := Blocker{CRD: crd, Version: sv, Target: migrationTargetBefore(olds[crd], nvs)}
			i := slices.IndexFunc(nvs, func(v apiVersion) bool { return v.name == sv })
			switch {
			case !defined:
				b.Problem = "no longer defines (the whole CRD is gone)"
			case i < 0:
				b.Problem = "no longer defines"
			case !nvs[i].served:
				b.Problem = "no longer serves"
			default:
				continue
			}
			out = append(out, b)
		}
	}
	return out
}

func migrationTargetBefore(old, new []apiVersion) string {
	served := func(vs []apiVersion, name string) bool {
		return slices.ContainsFunc(vs, func(v apiVersion) bool { return v.name == name && v.served })
	}
	var both []string
	for _, v := range new {
		if v.served && served(old, v.name) {
			if v.storage {
				return v.name
			}
			both = append(both, v.name)
		}
	}
	if len(both) > 0 {
		return both[len(both)-1]
	}
	return ""
}

func servedBefore(p *xpkg.Package) map[string][]string {
	out := map[string][]string{}
	for crd, vs := range definedVersionsBefore(p) {
		served := []string{}
		for _, v := range vs {
			if v.served {
				served = append(served, v.name)
			}
		}
		out[crd] = served
	}
	return out
}

// definitionsBefore is the reference in the form of Definitions.
func definitionsBefore(p *xpkg.Package) Definitions {
	d := Definitions{}
	for crd, vs := range definedVersionsBefore(p) {
		var out []DefinitionVersion
		for _, v := range vs {
			out = append(out, DefinitionVersion{Name: v.name, Served: v.served, Storage: v.storage})
		}
		d[crd] = out
	}
	return d
}

// storedMaps are stored versions to plan against: every version the old
// definitions have (some the new drop or stop serving), a version none
// defines, and the new package's versions (some the old lack).
func storedMaps(old, new Definitions) map[string]map[string][]string {
	out := map[string]map[string][]string{"old versions": {}, "unknown version": {}, "new versions": {}}
	for crd, vs := range old {
		for _, v := range vs {
			out["old versions"][crd] = append(out["old versions"][crd], v.Name)
		}
		out["unknown version"][crd] = []string{"v0", vs0(vs)}
	}
	for crd, vs := range new {
		for _, v := range slices.Backward(vs) {
			out["new versions"][crd] = append(out["new versions"][crd], v.Name)
		}
	}
	return out
}

func vs0(vs []DefinitionVersion) string {
	if len(vs) == 0 {
		return "v1"
	}
	return vs[0].Name
}

// checkAgainstReference holds the Definitions of two parsed packages, and
// the streamed ones when given, to the reference: the same definitions,
// names, served versions and blockers. It returns how many blockers it
// saw, for callers to check the stored maps found some.
func checkAgainstReference(t *testing.T, old, new *xpkg.Package, streamed *[2]Definitions) int {
	t.Helper()
	defs := [2]Definitions{DefinitionsOf(old), DefinitionsOf(new)}
	for i, p := range []*xpkg.Package{old, new} {
		side := [2]string{"old", "new"}[i]
		if want := definitionsBefore(p); !reflect.DeepEqual(defs[i], want) {
			t.Errorf("%s: DefinitionsOf:\n%v\nwant:\n%v", side, defs[i], want)
		}
		if streamed != nil && !reflect.DeepEqual(streamed[i], defs[i]) {
			t.Errorf("%s: streamed definitions:\n%v\nwant:\n%v", side, streamed[i], defs[i])
		}
		if got, want := defs[i].Served(), servedBefore(p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: served %v, want %v", side, got, want)
		}
		if got, want := defs[i].Names(), slices.Sorted(maps.Keys(definedVersionsBefore(p))); !slices.Equal(got, want) {
			t.Errorf("%s: names %v, want %v", side, got, want)
		}
	}
	if streamed != nil {
		defs = *streamed
	}
	blockers := 0
	for name, stored := range storedMaps(defs[0], defs[1]) {
		got, want := Preflight(defs[0], defs[1], stored), preflightBefore(old, new, stored)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("preflight, stored at the %s:\n%v\nwant:\n%v", name, got, want)
		}
		blockers += len(want)
	}
	return blockers
}

// indexReal indexes a real package's release as the diff verb reads it.
func indexReal(t *testing.T, name, tag string) *Indexed {
	t.Helper()
	b, err := fixture.Stream(filepath.Join("..", "..", "hack", "testdata", "packages", name, tag))
	if err != nil {
		t.Fatal(err)
	}
	x, err := Index(bytes.NewReader(b), xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// TestStreamedDefinitionsOfRealPairs: for every real sample pair, both
// ways, the definitions CompareIndexed gathers are those of the packages
// parsed whole, and plan as the parsed packages did.
func TestStreamedDefinitionsOfRealPairs(t *testing.T) {
	for _, p := range samplePairs {
		for _, way := range [][2]string{{p[1], p[2]}, {p[2], p[1]}} {
			t.Run(p[0]+"/"+way[0]+".."+way[1], func(t *testing.T) {
				old, new := indexReal(t, p[0], way[0]), indexReal(t, p[0], way[1])
				if old.Definitions() != nil {
					t.Error("definitions before CompareIndexed")
				}
				if _, err := CompareIndexed(old, new); err != nil {
					t.Fatal(err)
				}
				o, n, err := Parse(realDocs(t, p[0], way[0]), realDocs(t, p[0], way[1]), xpkg.DefaultLimits)
				if err != nil {
					t.Fatal(err)
				}
				if len(DefinitionsOf(o)) == 0 {
					t.Fatal("no definitions in the old package")
				}
				if checkAgainstReference(t, o, n, &[2]Definitions{old.Definitions(), new.Definitions()}) == 0 {
					t.Error("no stored version blocked the plan: the check checks nothing")
				}
				checkMeta(t, new.Meta(), n.Meta)
			})
		}
	}
}

// checkMeta: the streamed meta object says what the parsed one says.
func checkMeta(t *testing.T, got, want *xpkg.Meta) {
	t.Helper()
	if got == nil || want == nil {
		if got != want {
			t.Errorf("meta %v, want %v", got, want)
		}
		return
	}
	if !reflect.DeepEqual(got.Content, want.Content) || !bytes.Equal(got.Raw, want.Raw) ||
		got.Kind != want.Kind || got.Crossplane != want.Crossplane || !reflect.DeepEqual(got.DependsOn, want.DependsOn) {
		t.Errorf("meta:\n%s\nwant:\n%s", got.Raw, want.Raw)
	}
}

// crdOf is a CRD whose versions are written "name[,served][,storage]".
func crdOf(name string, versions ...string) string {
	s := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\nspec:\n  group: example.org\n  versions:\n"
	for _, v := range versions {
		f := strings.Split(v, ",")
		s += fmt.Sprintf("  - name: %s\n    served: %t\n    storage: %t\n", f[0], slices.Contains(f, "served"), slices.Contains(f, "storage"))
	}
	return s
}

func xrdOf(claim bool, versions string) string {
	s := "apiVersion: apiextensions.crossplane.io/v1\nkind: CompositeResourceDefinition\nmetadata:\n  name: xnets.example.org\nspec:\n  group: example.org\n  names:\n    kind: XNet\n    plural: xnets\n"
	if claim {
		s += "  claimNames:\n    kind: Net\n    plural: nets\n"
	}
	return s + "  versions:\n" + versions
}

const (
	metaDoc = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: c\nspec:\n  crossplane:\n    version: '>=v1.14'\n  dependsOn:\n  - provider: xpkg.example.org/p\n    version: '>=v1'\n"
	// v1beta1 CRDs could name one version and its schema without versions.
	v1beta1CRD = "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: olds.example.org\nspec:\n  group: example.org\n  version: v1alpha1\n  validation:\n    openAPIV3Schema:\n      type: object\n"
	// Documents whose header the line scan declines: flow style, quoted
	// keys, an anchor.
	flowCRD   = "{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: flows.example.org}, spec: {group: example.org, versions: [{name: v1, served: true, storage: true}, {name: v2, served: false, storage: false}]}}\n"
	quotedCRD = "\"apiVersion\": apiextensions.k8s.io/v1\n\"kind\": CustomResourceDefinition\n\"metadata\":\n  \"name\": quoted.example.org\nspec:\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"
	anchorXRD = "apiVersion: apiextensions.crossplane.io/v1\nkind: CompositeResourceDefinition\nmetadata: &m\n  name: xanchors.example.org\nspec:\n  group: example.org\n  claimNames:\n    plural: anchors\n  versions:\n  - name: v1\n    served: true\n    referenceable: true\n"
)

var oddDefinitionCases = []struct {
	name, old, new string
	// want is what the old and new packages' definitions must hold (a
	// subset, besides the reference), and parsed that definitions were
	// decoded while indexing.
	want   [2]Definitions
	parsed bool
}{
	{name: "the same CRD twice, the later wins",
		old:  joinDocs(metaDoc, crdOf("a.example.org", "v1,served,storage"), crdOf("a.example.org", "v1,served", "v2,served,storage")),
		new:  joinDocs(metaDoc, crdOf("a.example.org", "v2,served,storage"), crdOf("a.example.org", "v1,served,storage")),
		want: [2]Definitions{{"a.example.org": {{"v1", true, false}, {"v2", true, true}}}, {"a.example.org": {{"v1", true, true}}}}},
	{name: "the same bytes in both and twice in one",
		old:  joinDocs(metaDoc, crdOf("a.example.org", "v1,served,storage"), crdOf("b.example.org", "v1,served,storage"), crdOf("a.example.org", "v1,served,storage")),
		new:  joinDocs(crdOf("b.example.org", "v1,served,storage"), metaDoc, crdOf("a.example.org", "v1,served,storage")),
		want: [2]Definitions{{"a.example.org": {{"v1", true, true}}, "b.example.org": {{"v1", true, true}}}, {"a.example.org": {{"v1", true, true}}, "b.example.org": {{"v1", true, true}}}}},
	{name: "an XRD and its claim",
		old:  joinDocs(metaDoc, xrdOf(true, "  - name: v1alpha1\n    served: true\n    referenceable: true\n")),
		new:  joinDocs(metaDoc, xrdOf(false, "  - name: v1alpha1\n    served: false\n    referenceable: false\n  - name: v1\n    served: true\n    referenceable: true\n")),
		want: [2]Definitions{{"xnets.example.org": {{"v1alpha1", true, true}}, "nets.example.org": {{"v1alpha1", true, true}}}, {"xnets.example.org": {{"v1alpha1", false, false}, {"v1", true, true}}}}},
	{name: "the claim stays with the first XRD",
		old:  joinDocs(metaDoc, xrdOf(true, "  - name: v1\n    served: true\n    referenceable: true\n"), xrdOf(false, "  - name: v2\n    served: true\n    referenceable: true\n")),
		new:  joinDocs(metaDoc, xrdOf(true, "  - name: v2\n    served: true\n    referenceable: true\n")),
		want: [2]Definitions{{"xnets.example.org": {{"v2", true, true}}, "nets.example.org": {{"v1", true, true}}}, nil}},
	{name: "migration targets and unserved CRDs",
		old:  joinDocs(metaDoc, crdOf("m.example.org", "v1,served", "v2,served,storage", "v3"), crdOf("u.example.org", "v1,served,storage"), crdOf("s.example.org", "v1,served,storage", "v2,served")),
		new:  joinDocs(metaDoc, crdOf("m.example.org", "v1,served", "v2,served", "v3,served,storage"), crdOf("u.example.org", "v1,storage"), crdOf("s.example.org", "v1,served,storage", "v2,served")),
		want: [2]Definitions{nil, {"u.example.org": {{"v1", false, true}}}}},
	{name: "a v1beta1 CRD with spec.version only",
		old:  joinDocs(metaDoc, v1beta1CRD),
		new:  joinDocs(metaDoc, strings.Replace(v1beta1CRD, "v1alpha1", "v1beta1", 1)),
		want: [2]Definitions{{"olds.example.org": {{"v1alpha1", true, true}}}, {"olds.example.org": {{"v1beta1", true, true}}}}},
	{name: "headers only a parse reads", parsed: true,
		old:  joinDocs(metaDoc, flowCRD, quotedCRD, anchorXRD, crdOf("flows.example.org", "v3,served,storage")),
		new:  joinDocs(metaDoc, crdOf("quoted.example.org", "v2,served,storage"), flowCRD, anchorXRD),
		want: [2]Definitions{{"flows.example.org": {{"v3", true, true}}, "quoted.example.org": {{"v1", true, true}}, "xanchors.example.org": {{"v1", true, true}}, "anchors.example.org": {{"v1", true, true}}}, {"flows.example.org": {{"v1", true, true}, {"v2", false, false}}, "quoted.example.org": {{"v2", true, true}}}}},
	{name: "the meta object late",
		old: joinDocs(crdOf("a.example.org", "v1,served,storage"), metaDoc),
		new: joinDocs(crdOf("a.example.org", "v1,served", "v2,served,storage"), crdOf("b.example.org", "v1,served,storage"), strings.Replace(metaDoc, "'>=v1.14'", "'>=v1.16'", 1))},
	{name: "no meta object, no definitions",
		old: crdOf("a.example.org", "v1,served,storage"),
		new: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"},
}

func joinDocs(docs ...string) string { return strings.Join(docs, "---\n") }

// TestStreamedDefinitionsOnOddStreams: on streams that exercise how
// definitions are gathered (documents decoded once for several
// occurrences, or while indexing; names written twice; claims; old CRD
// forms), the streamed definitions and meta object are those of the
// packages parsed whole, and plan alike.
func TestStreamedDefinitionsOnOddStreams(t *testing.T) {
	for _, c := range oddDefinitionCases {
		t.Run(c.name, func(t *testing.T) {
			var x [2]*Indexed
			var p [2]*xpkg.Package
			for i, s := range []string{c.old, c.new} {
				var err error
				if x[i], err = Index(strings.NewReader(s), xpkg.DefaultLimits); err != nil {
					t.Fatal(err)
				}
				defer x[i].Close()
				if p[i], err = xpkg.Parse(strings.NewReader(s), xpkg.DefaultLimits); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := CompareIndexed(x[0], x[1]); err != nil {
				t.Fatal(err)
			}
			checkAgainstReference(t, p[0], p[1], &[2]Definitions{x[0].Definitions(), x[1].Definitions()})
			for i := range 2 {
				checkMeta(t, x[i].Meta(), p[i].Meta)
				for crd, want := range c.want[i] {
					if got := x[i].Definitions()[crd]; !reflect.DeepEqual(got, want) {
						t.Errorf("side %d: %s: %v, want %v", i, crd, got, want)
					}
				}
			}
			if parsed := len(x[0].learned) > 0 && len(x[1].learned) > 0; parsed != c.parsed {
				t.Errorf("definitions decoded while indexing on both sides: %t, want %t", parsed, c.parsed)
			}
		})
	}
}

// TestDefinitionsAloneOfRealPackages: a package read by itself, with no
// comparison, has the definitions of the package parsed whole.
func TestDefinitionsAloneOfRealPackages(t *testing.T) {
	for _, p := range samplePairs {
		for _, v := range []string{p[1], p[2]} {
			x := indexReal(t, p[0], v)
			got, err := x.DefinitionsAlone()
			if err != nil {
				t.Fatal(err)
			}
			o, _, err := Parse(realDocs(t, p[0], v), realDocs(t, p[0], v), xpkg.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if want := DefinitionsOf(o); len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: %d definitions alone, %d parsed whole", p[0], v, len(got), len(want))
			}
		}
	}
}
