// Package inspect sums a package up without writing its content: what its
// meta object declares, how many objects of each kind it holds, which
// runtime it runs, and what its image's manifests say.
package inspect

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Report is one package, summed up.
type Report struct {
	Source       string            `json:"source"`
	Type         string            `json:"type"`
	Reference    string            `json:"reference,omitempty"`
	Kind         string            `json:"kind"`
	APIVersion   string            `json:"apiVersion"`
	Name         string            `json:"name"`
	Version      string            `json:"version,omitempty"`
	Crossplane   string            `json:"crossplane,omitempty"`
	DependsOn    []xpkg.Dependency `json:"dependsOn,omitempty"`
	Capabilities []string          `json:"capabilities,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	// Problems are what in the meta object Crossplane refuses: labels and
	// annotations whose values are not strings (shown in Annotations as
	// YAML wrote them).
	Problems []string    `json:"problems,omitempty"`
	Objects  []KindCount `json:"objects"`
	// Runtime says what runs the package: a controller image the meta
	// object names, the package image itself (an embedded runtime), or
	// nothing (a configuration).
	Runtime Runtime           `json:"runtime"`
	Format  string            `json:"format"`
	Image   *source.ImageInfo `json:"image,omitempty"`
}

// KindCount is how many objects of a kind the package holds.
type KindCount struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Count      int    `json:"count"`
}

// Runtime is what runs the package.
type Runtime struct {
	// Kind is controller-image, embedded or none.
	Kind       string   `json:"kind"`
	Image      string   `json:"image,omitempty"`
	Entrypoint []string `json:"entrypoint,omitempty"`
}

// Runtime kinds.
const (
	RuntimeController = "controller-image"
	RuntimeEmbedded   = "embedded"
	RuntimeNone       = "none"
)

// metaAnnotations are the annotation keys a report keeps: Crossplane's
// meta.crossplane.io/ ones, and the bare keys packages used before them.
var bareAnnotations = []string{"company", "maintainer", "source", "license", "descriptionShort", "description", "readme", "keywords", "iconURI"}

// Summarize sums up an opened package. It reads the content stream (one object
// at a time) and closes the package, which verifies the base layer and
// counts its uncompressed size.
func Summarize(p *source.Package, limits xpkg.Limits) (*Report, error) {
	r := &Report{Source: p.Source, Type: p.Type, Reference: p.Reference, Format: p.Format, Image: p.Image}
	r.Version = reference.Tag(p.Reference)
	content, err := p.Content()
	if err != nil {
		return nil, p.Cause(err)
	}
	counts := map[[2]string]int{}
	var meta *xpkg.Meta
	dec := xpkg.NewDecoder(content, limits)
	for {
		o, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, p.Cause(err)
		}
		if xpkg.IsMeta(o) && meta == nil {
			meta = xpkg.NewMeta(o)
			continue
		}
		gvk := o.GVK()
		counts[[2]string{gvk.GroupVersion().String(), gvk.Kind}]++
	}
	if err := p.Close(); err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, fmt.Errorf("%s has no meta object (a Provider, Configuration or Function of meta.pkg.crossplane.io)", p.Source)
	}
	r.Kind, r.APIVersion, r.Name = meta.Kind, meta.Group+"/"+meta.Version, meta.Name()
	r.Crossplane, r.DependsOn = meta.Crossplane, meta.DependsOn
	r.Capabilities = stringSlice(meta.Content, "spec", "capabilities")
	r.Annotations = annotations(meta.Content)
	r.Problems = xpkg.MetadataProblems(meta.Object)
	for k, n := range counts {
		r.Objects = append(r.Objects, KindCount{APIVersion: k[0], Kind: k[1], Count: n})
	}
	slices.SortFunc(r.Objects, func(a, b KindCount) int {
		return cmp.Or(b.Count-a.Count, strings.Compare(a.Kind, b.Kind), strings.Compare(a.APIVersion, b.APIVersion))
	})
	r.Runtime = runtimeOf(meta, p.Image)
	return r, nil
}

// runtimeOf: a controller image named by the meta object, else, for a
// provider or function, the package image itself.
func runtimeOf(meta *xpkg.Meta, img *source.ImageInfo) Runtime {
	switch {
	case meta.ControllerImage != "":
		return Runtime{Kind: RuntimeController, Image: meta.ControllerImage}
	case meta.Kind == "Configuration":
		return Runtime{Kind: RuntimeNone}
	}
	rt := Runtime{Kind: RuntimeEmbedded}
	if img != nil {
		rt.Entrypoint = append(slices.Clone(img.Entrypoint), img.Cmd...)
	}
	return rt
}

func annotations(raw map[string]any) map[string]string {
	md, _ := raw["metadata"].(map[string]any)
	as, _ := md["annotations"].(map[string]any)
	out := map[string]string{}
	for k, v := range as {
		if !strings.HasPrefix(k, "meta.crossplane.io/") && !slices.Contains(bareAnnotations, k) {
			continue
		}
		switch v := v.(type) {
		case string:
			out[k] = v
		case nil:
			out[k] = "" // as Crossplane reads it
		default:
			out[k] = fmt.Sprint(v) // not a string: Problems says so
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func stringSlice(raw map[string]any, path ...string) []string {
	var cur any = raw
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	items, _ := cur.([]any)
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
