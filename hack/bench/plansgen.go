package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"sigs.k8s.io/yaml"
)

// The plans benchmark's provider: provider-aws v0.58.0's 100 largest CRDs
// (about 50 KB each, as in the largest real providers), copy i of the
// list in the API group aws<i/100>.crossplane.io, as the generated pair of
// hack/bench/internal/diffbench is made. Two versions differ so that each
// finding a plan has is there to be found.

// planTemplates is how many distinct CRDs the copies are made of.
const planTemplates = 100

// awsGroup is the group the templates are in, renamed in every copy.
const awsGroup = "aws.crossplane.io"

// crdVariant is one form of a template CRD, in awsGroup: YAML for the
// package, JSON for the API server.
type crdVariant struct {
	yaml, json []byte
	name       string
}

// planCRD is one CRD of a generated provider: a variant in the API group
// <prefix><group>.crossplane.io.
type planCRD struct {
	v      *crdVariant
	prefix string
	group  int
}

func (c planCRD) rename(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(awsGroup), []byte(c.prefix+strconv.Itoa(c.group)+".crossplane.io"))
}

// Name is the CRD's metadata.name.
func (c planCRD) Name() string { return string(c.rename([]byte(c.v.name))) }

// object is the CRD as the API server takes it, decoded.
func (c planCRD) object() (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(c.rename(c.v.json), &m); err != nil {
		return nil, fmt.Errorf("CRD %s: %w", c.Name(), err)
	}
	return m, nil
}

// planProvider is the two versions of a generated provider with n CRDs
// each, and the CRDs that make the findings:
//   - upDropped stores v1alpha1 in the cluster, which v2 no longer defines
//     (upgrade: stored-version-dropped);
//   - gone is a kind v2 no longer defines, with one live object (upgrade:
//     stored-version-dropped and live-objects; uninstall: live-objects);
//   - downDropped gains v1beta2 in v2, its storage version, which v1 does
//     not define (rollback: stored-version-dropped);
//   - added is a kind only v2 defines, with one live object once v2 runs
//     (rollback: stored-version-dropped and live-objects).
//
// Every CRD of v2 differs from v1's: its schemas' descriptions changed.
type planProvider struct {
	v1, v2                              []planCRD
	upDropped, gone, downDropped, added planCRD
}

// planTemplate is a template CRD with its variants.
type planTemplate struct {
	obj    map[string]any
	v1, v2 *crdVariant
}

// loadTemplates reads provider-aws v0.58.0: its metadata document and
// its planTemplates largest CRDs, with their plain variants.
func loadTemplates(root string) (meta []byte, ts []*planTemplate, err error) {
	dir := filepath.Join(root, "hack/testdata/packages/provider-aws/v0.58.0")
	if meta, err = os.ReadFile(filepath.Join(dir, "crossplane.yaml")); err != nil {
		return nil, nil, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, "crds"))
	if err != nil {
		return nil, nil, err
	}
	var docs [][]byte
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, "crds", e.Name()))
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, b)
	}
	slices.SortStableFunc(docs, func(a, b []byte) int { return len(b) - len(a) })
	if len(docs) < planTemplates {
		return nil, nil, fmt.Errorf("%s: %d CRDs, want %d", dir, len(docs), planTemplates)
	}
	for _, d := range docs[:planTemplates] {
		t := &planTemplate{}
		if err := yaml.Unmarshal(d, &t.obj); err != nil {
			return nil, nil, err
		}
		if t.v1, err = variant(t.obj, nil); err != nil {
			return nil, nil, err
		}
		if t.v2, err = variant(t.obj, changeDescriptions); err != nil {
			return nil, nil, err
		}
		ts = append(ts, t)
	}
	return meta, ts, nil
}

// variant encodes a copy of a template after edit (nil: none).
func variant(obj map[string]any, edits ...func(map[string]any) error) (*crdVariant, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, edit := range edits {
		if edit == nil {
			continue
		}
		if err := edit(m); err != nil {
			return nil, err
		}
	}
	v := &crdVariant{}
	v.name, _ = nested(m, "metadata", "name").(string)
	if v.json, err = json.Marshal(m); err != nil {
		return nil, err
	}
	if v.yaml, err = yaml.Marshal(m); err != nil {
		return nil, err
	}
	return v, nil
}

// nested is the value at a path of maps, or nil.
func nested(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// changeDescriptions is v2's change to every CRD: the description of each
// version's schema.
func changeDescriptions(m map[string]any) error {
	vs, _ := nested(m, "spec", "versions").([]any)
	for _, v := range vs {
		s, ok := nested(v.(map[string]any), "schema", "openAPIV3Schema").(map[string]any)
		if !ok {
			return fmt.Errorf("CRD %v: a version without a schema", nested(m, "metadata", "name"))
		}
		d, _ := s["description"].(string)
		s["description"] = d + " Revised in v2.0.0."
	}
	return nil
}

// withVersions replaces a CRD's versions with copies of its storage
// version under the given names, all served, the last one the storage
// version.
func withVersions(names ...string) func(map[string]any) error {
	return func(m map[string]any) error {
		vs, _ := nested(m, "spec", "versions").([]any)
		i := slices.IndexFunc(vs, func(v any) bool { return nested(v.(map[string]any), "storage") == true })
		if i < 0 {
			return fmt.Errorf("CRD %v: no storage version", nested(m, "metadata", "name"))
		}
		b, err := json.Marshal(vs[i])
		if err != nil {
			return err
		}
		var out []any
		for j, name := range names {
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			v["name"], v["served"], v["storage"] = name, true, j == len(names)-1
			out = append(out, v)
		}
		m["spec"].(map[string]any)["versions"] = out
		return nil
	}
}

// generate makes the two versions of a provider with n CRDs (n > 3), in
// the groups <prefix><i>.crossplane.io.
func generate(ts []*planTemplate, n int, prefix string) (*planProvider, error) {
	at := func(v *crdVariant, i int) planCRD { return planCRD{v: v, prefix: prefix, group: i / planTemplates} }
	t0, t2 := ts[0].obj, ts[2].obj
	up1, err := variant(t0, withVersions("v1alpha1", "v1beta1"))
	if err != nil {
		return nil, err
	}
	up2, err := variant(t0, withVersions("v1beta1"), changeDescriptions)
	if err != nil {
		return nil, err
	}
	down1, err := variant(t2, withVersions("v1beta1"))
	if err != nil {
		return nil, err
	}
	down2, err := variant(t2, withVersions("v1beta1", "v1beta2"), changeDescriptions)
	if err != nil {
		return nil, err
	}
	p := &planProvider{upDropped: at(up1, 0), gone: at(ts[1].v1, 1), downDropped: at(down1, 2), added: at(ts[n%planTemplates].v2, n)}
	for i := range n {
		t := ts[i%planTemplates]
		v1, v2 := at(t.v1, i), at(t.v2, i)
		switch i {
		case 0:
			v1, v2 = p.upDropped, at(up2, 0)
		case 2:
			v1, v2 = p.downDropped, at(down2, 2)
		}
		p.v1 = append(p.v1, v1)
		if i != 1 {
			p.v2 = append(p.v2, v2)
		}
	}
	p.v2 = append(p.v2, p.added)
	return p, nil
}

// plainProvider is a provider with n CRDs, all plain: the --wait
// benchmark's.
func plainProvider(ts []*planTemplate, n int, prefix string) []planCRD {
	var out []planCRD
	for i := range n {
		out = append(out, planCRD{v: ts[i%planTemplates].v1, prefix: prefix, group: i / planTemplates})
	}
	return out
}

// stream is a package.yaml: the metadata document, then the CRDs.
func stream(meta []byte, crds []planCRD) []byte {
	var b bytes.Buffer
	b.Write(meta)
	for _, c := range crds {
		if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
			b.WriteByte('\n')
		}
		b.WriteString("---\n")
		b.Write(c.rename(c.v.yaml))
	}
	return b.Bytes()
}

// names are the CRDs' names.
func names(crds []planCRD) []string {
	out := make([]string, len(crds))
	for i, c := range crds {
		out[i] = c.Name()
	}
	return out
}
