package xpkg

import (
	"bytes"
	"errors"
	"io"
)

// Package is a parsed package stream.
type Package struct {
	// Meta is the package's meta object; nil when the stream has none, and
	// the first one when it has several (Validate reports both).
	Meta *Meta
	// Objects are every document of the stream, the meta object included,
	// in stream order.
	Objects []*Object
}

// Parse parses a whole package stream. It fails only on streams it cannot
// read (malformed YAML, limits exceeded); breaches of the content rules are
// for Validate to report.
func Parse(r io.Reader, limits Limits) (*Package, error) {
	d := NewDecoder(r, limits)
	p := &Package{}
	for {
		o, err := d.Next()
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return nil, err
		}
		p.Objects = append(p.Objects, o)
		if p.Meta == nil && IsMeta(o) {
			p.Meta = NewMeta(o)
		}
	}
}

// Kind is the package's kind (Provider, Configuration or Function), or ""
// when it has no meta object.
func (p *Package) Kind() string {
	if p.Meta == nil {
		return ""
	}
	return p.Meta.Kind
}

// ParseMeta parses a stream up to its meta object, which package builds put
// first, so that learning a package's kind rarely parses more than one
// document.
func ParseMeta(r io.Reader, limits Limits) (*Meta, error) {
	d := NewDecoder(r, limits)
	for {
		o, err := d.Next()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the package has no meta object (Provider, Configuration or Function)")
		}
		if err != nil {
			return nil, err
		}
		if IsMeta(o) {
			return NewMeta(o), nil
		}
	}
}

// Split reads a whole stream into the bytes of its documents, within
// limits, leaving out documents that hold only whitespace. Decode each
// with DecodeDocument, in any order or in parallel.
func Split(r io.Reader, limits Limits) ([][]byte, error) {
	var docs [][]byte
	err := EachDocument(r, limits, func(_ int, raw []byte) error {
		docs = append(docs, bytes.Clone(raw))
		return nil
	})
	return docs, err
}

// EachDocument calls fn with each document of a stream, as Split would
// return them, one at a time: raw is only fn's until it returns.
func EachDocument(r io.Reader, limits Limits, fn func(index int, raw []byte) error) error {
	d := NewDecoder(r, limits)
	d.reuse = &bytes.Buffer{}
	for {
		raw, err := d.NextRaw()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := fn(d.index, raw); err != nil {
				return err
			}
			d.index++
		}
	}
}

// DecodeDocument parses the document at index of a Split stream, within
// limits; nil when it holds only comments.
func DecodeDocument(index int, raw []byte, limits Limits) (*Object, error) {
	return decode(index, raw, limits)
}

// NewPackage is the package of decoded objects, in stream order.
func NewPackage(objects []*Object) *Package {
	p := &Package{Objects: objects}
	for _, o := range objects {
		if IsMeta(o) {
			p.Meta = NewMeta(o)
			break
		}
	}
	return p
}
