package legacy

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// crd is one CustomResourceDefinition of the package and where it was found.
type crd struct {
	obj      *unstructured.Unstructured
	meta     map[string]any // obj's metadata, checked to be a mapping
	file     *file
	doc      int
	name     string
	group    string
	kind     string
	plural   string
	versions []string // spec.versions names, or spec.version alone
}

// where names the CRD's document for messages.
func (c *crd) where() string { return fmt.Sprintf("%s document %d", c.file.name, c.doc) }

// err is an error about this CRD.
func (c *crd) err(format string, args ...any) error {
	return docErr(c.file.name, c.doc, format, args...)
}

// parseCRDFile reads every CRD of a *crd.yaml file; a file may hold several.
// Every non-empty document must be a CRD: anything else in a CRD file is a
// packaging mistake the package manager would have installed blindly. room
// is how many more CRDs the package may hold (see MaxCRDs).
func parseCRDFile(f *file, room int) ([]*crd, error) {
	var out []*crd
	for _, d := range splitDocuments(f.data) {
		m, err := decodeMap(d.data)
		if err != nil {
			return nil, docErr(f.name, d.n, "%w", err)
		}
		if m == nil {
			continue
		}
		if len(out) >= room {
			return nil, docErr(f.name, d.n, "%w", tooLarge("the package holds more than %d CustomResourceDefinitions", MaxCRDs))
		}
		c, err := newCRD(m)
		if err != nil {
			return nil, docErr(f.name, d.n, "%w", err)
		}
		c.file, c.doc = f, d.n
		out = append(out, c)
	}
	return out, nil
}

// newCRD checks that m is a CRD that can be installed and annotated. The CRD
// keeps the apiextensions version it was written in: old packages use
// v1beta1, which newer clusters no longer serve, and converting it is not
// unpack's job.
func newCRD(m map[string]any) (*crd, error) {
	kind, _ := m["kind"].(string)
	if kind != "CustomResourceDefinition" {
		if kind == "" {
			kind = "none"
		}
		return nil, fmt.Errorf("not a CustomResourceDefinition (kind %s)", kind)
	}
	switch av, _ := m["apiVersion"].(string); av {
	case "apiextensions.k8s.io/v1beta1", "apiextensions.k8s.io/v1":
	default:
		return nil, fmt.Errorf("CustomResourceDefinition has apiVersion %q; want apiextensions.k8s.io/v1beta1 or apiextensions.k8s.io/v1", av)
	}
	meta, ok := m["metadata"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("CustomResourceDefinition has no metadata mapping")
	}
	if _, err := stringMap(meta["labels"], "metadata.labels"); err != nil {
		return nil, err
	}
	if _, err := stringMap(meta["annotations"], "metadata.annotations"); err != nil {
		return nil, err
	}
	c := &crd{obj: &unstructured.Unstructured{Object: m}, meta: meta}
	if err := c.readSpec(meta); err != nil {
		return nil, err
	}
	return c, nil
}

// readSpec reads the identifying fields every CRD must have.
func (c *crd) readSpec(meta map[string]any) error {
	var err error
	fields := []struct {
		dst  *string
		from map[string]any
		path []string
	}{
		{&c.name, meta, []string{"name"}},
		{&c.group, c.obj.Object, []string{"spec", "group"}},
		{&c.kind, c.obj.Object, []string{"spec", "names", "kind"}},
		{&c.plural, c.obj.Object, []string{"spec", "names", "plural"}},
	}
	for _, f := range fields {
		if *f.dst, err = requiredString(f.from, f.path...); err != nil {
			return err
		}
	}
	if c.name != c.plural+"."+c.group {
		return fmt.Errorf("CustomResourceDefinition name %q must be <spec.names.plural>.<spec.group>, here %q", c.name, c.plural+"."+c.group)
	}
	c.versions, err = crdVersions(c.obj.Object)
	return err
}

// crdVersions lists a CRD's versions: spec.versions, or the single
// spec.version of early v1beta1 CRDs.
func crdVersions(obj map[string]any) ([]string, error) {
	single, found, err := unstructured.NestedFieldNoCopy(obj, "spec", "version")
	if err != nil {
		return nil, fmt.Errorf("spec: want a mapping")
	}
	version, ok := single.(string)
	if found && !ok {
		return nil, fmt.Errorf("spec.version: want a string, got %s", jsonType(single))
	}
	list, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "versions")
	if list == nil {
		if version == "" {
			return nil, fmt.Errorf("CustomResourceDefinition has no version: set spec.version or spec.versions")
		}
		return []string{version}, nil
	}
	items, ok := list.([]any)
	if !ok || len(items) == 0 {
		return nil, fmt.Errorf("spec.versions: want a non-empty list")
	}
	var names []string
	for i, it := range items {
		m, _ := it.(map[string]any)
		name, err := requiredString(m, "name")
		if err != nil {
			return nil, fmt.Errorf("spec.versions[%d]: %w", i, err)
		}
		names = append(names, name)
	}
	if version != "" && !slices.Contains(names, version) {
		return nil, fmt.Errorf("spec.version %q is not listed in spec.versions", version)
	}
	return names, nil
}

// requiredString reads a non-empty string at path in m.
func requiredString(m map[string]any, path ...string) (string, error) {
	field := strings.Join(path, ".")
	v, found, err := unstructured.NestedFieldNoCopy(m, path...)
	if err != nil {
		return "", fmt.Errorf("field %q: a parent of it is not a mapping", field)
	}
	if !found || v == nil {
		return "", fmt.Errorf("missing required field %q", field)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("field %q: want a string, got %s", field, jsonType(v))
	}
	if s == "" {
		return "", fmt.Errorf("missing required field %q", field)
	}
	return s, nil
}

// checkCRDs refuses a group, kind and version defined twice, which would
// make one definition silently replace the other. The same CRD name in
// several files, each with other versions, follows the design's per-version
// layout and is only reported.
func checkCRDs(crds []*crd, warn *warnings) error {
	byGVK := map[string]*crd{}
	byName := map[string]*crd{}
	for _, c := range crds {
		for _, v := range c.versions {
			gvk := c.group + "/" + v + ", Kind=" + c.kind
			if first, ok := byGVK[gvk]; ok {
				return c.err("%s is also defined in %s", gvk, first.where())
			}
			byGVK[gvk] = c
		}
		if first, ok := byName[c.name]; ok {
			warn.add(c.where(), "CustomResourceDefinition %q is also defined in %s with other versions; both are kept, and applied in order the later replaces the earlier", c.name, first.where())
			continue
		}
		byName[c.name] = c
	}
	return nil
}
