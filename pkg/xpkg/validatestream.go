package xpkg

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Checked is what ValidateStream found: what Read and Validate would say
// of the same stream, without the objects.
type Checked struct {
	// Meta is the stream's first meta object (nil when it has none).
	Meta *Meta
	// Objects counts the stream's objects, the meta object included.
	Objects    int
	Violations []Violation
	// Definitions name the stream's CRDs, MRDs and XRDs: each the CRD it
	// makes.
	Definitions []string
}

// checkedDoc is what checking one document found, before the package's
// kind is known.
type checkedDoc struct {
	obj *Object // nil: the document holds only comments
	// stub is the object's header, for the check that needs the package's
	// kind; nil when that check does not apply to it.
	stub      *Object
	pre, post []Violation
	meta      bool
	err       error
}

// ValidateStream is Read and Validate in memory that does not grow with
// the stream: documents are decoded and checked on every CPU, a few at a
// time, and only their violations and headers are kept. It fails where
// Read fails, on the first document in stream order that cannot be read.
func ValidateStream(r io.Reader, limits Limits) (*Checked, error) {
	type job struct {
		raw []byte
		err error
		res chan checkedDoc
	}
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *job, 2*workers)
	order := make(chan *job, 2*workers)
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done) // first: the reader stops, then the workers

	go func() { // the reader: documents in order, and where reading fails
		defer close(jobs)
		defer close(order)
		d := NewDecoder(r, limits)
		for {
			raw, err := d.NextRaw()
			if errors.Is(err, io.EOF) {
				return
			}
			// The decoder numbers documents as Read does, objects only:
			// a document of comments or whitespace holds none.
			if err == nil && !commentsOnly(raw) {
				d.index++
			}
			j := &job{raw: raw, err: err, res: make(chan checkedDoc, 1)}
			select {
			case order <- j:
			case <-done:
				return
			}
			if err != nil {
				j.res <- checkedDoc{err: err}
				return
			}
			select {
			case jobs <- j:
			case <-done:
				return
			}
		}
	}()
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				j.res <- checkDocument(j.raw, limits)
			}
		})
	}

	c := &Checked{}
	var docs []checkedDoc
	var metas []string
	for j := range order {
		d := <-j.res
		if d.err != nil {
			// Numbered as Read numbers documents: objects before it.
			var syntax *SyntaxError
			if errors.As(d.err, &syntax) {
				syntax.Document = c.Objects
			}
			go drain(order) // let the reader and the workers finish
			return nil, d.err
		}
		if d.obj == nil {
			continue
		}
		index := c.Objects
		c.Objects++
		renumber(d, index)
		if d.meta {
			metas = append(metas, strconv.Itoa(index))
			if c.Meta == nil {
				c.Meta = NewMeta(d.obj)
			}
		}
		if d.stub != nil && isDefinitionKind(d.stub.GVK().Kind) {
			c.Definitions = append(c.Definitions, d.stub.Name())
		}
		d.obj = nil // only the first meta object is kept
		docs = append(docs, d)
	}
	c.Violations = append(c.Violations, oneMeta(metas)...)
	for _, d := range docs {
		c.Violations = append(c.Violations, d.pre...)
		if d.stub != nil && c.Meta != nil {
			if v, ok := checkAllowed(c.Meta.Kind, d.stub); !ok {
				c.Violations = append(c.Violations, v)
			}
		}
		c.Violations = append(c.Violations, d.post...)
	}
	slices.SortStableFunc(c.Violations, func(a, b Violation) int { return a.Document - b.Document })
	return c, nil
}

// drain empties the order channel after the collector stopped, so that
// the reader, blocked on it, can see done.
func drain[T any](ch <-chan T) {
	for range ch {
	}
}

// checkDocument decodes one document and checks what does not depend on
// the package's kind, as checkObject does. Index 0 stands for the
// document's number, set once it is known.
func checkDocument(raw []byte, limits Limits) checkedDoc {
	d := checkDecoded(raw, limits)
	detachViolations(d.pre)
	detachViolations(d.post)
	return d
}

func checkDecoded(raw []byte, limits Limits) checkedDoc {
	o, err := decode(0, raw, limits)
	if err != nil || o == nil {
		return checkedDoc{err: err}
	}
	d := checkedDoc{obj: o, meta: IsMeta(o)}
	gvk := o.GVK()
	if gvk.Kind == "" || gvk.Version == "" {
		d.pre = []Violation{violation(o, RuleObjectHeader, "has no apiVersion or kind")}
		return d
	}
	if msg := nameProblem(o.Name()); msg != "" {
		d.pre = append(d.pre, violation(o, RuleName, "metadata.name %s", msg))
	}
	d.pre = append(d.pre, metadataViolations(o)...)
	switch {
	case d.meta:
		d.pre = append(d.pre, checkMeta(NewMeta(o))...)
		return d
	case IsMetaGroup(gvk.Group):
		d.pre = append(d.pre, violation(o, RuleAllowedKind, "%s is not a package kind: use Provider, Configuration or Function", gvk.Kind))
		return d
	}
	d.stub = &Object{Content: map[string]any{
		"apiVersion": strings.Clone(gvk.GroupVersion().String()),
		"kind":       strings.Clone(gvk.Kind),
		"metadata":   map[string]any{"name": strings.Clone(o.Name())},
	}}
	if gvk.Kind == "CustomResourceDefinition" || gvk.Kind == "CompositeResourceDefinition" {
		d.post = checkDefinition(o)
	}
	return d
}

// isDefinitionKind tells the kinds that make a CRD of their name.
func isDefinitionKind(kind string) bool {
	switch kind {
	case "CustomResourceDefinition", "ManagedResourceDefinition", "CompositeResourceDefinition":
		return true
	}
	return false
}

// commentsOnly reports whether a document holds nothing but comments and
// whitespace.
func commentsOnly(raw []byte) bool {
	for line := range bytes.Lines(raw) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}

// renumber gives a checked document its number in the stream.
func renumber(d checkedDoc, index int) {
	d.obj.Index = index
	if d.stub != nil {
		d.stub.Index = index
	}
	for _, vs := range [][]Violation{d.pre, d.post} {
		for i := range vs {
			vs[i].Document = index
		}
	}
}

// detachViolations copies the strings violations keep: decoded values
// share their document's bytes.
func detachViolations(vs []Violation) {
	for i := range vs {
		vs[i].Object, vs[i].Message, vs[i].Rule = strings.Clone(vs[i].Object), strings.Clone(vs[i].Message), strings.Clone(vs[i].Rule)
	}
}
