package xpkg

import (
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

// Read parses a whole package stream. It fails only on streams it cannot
// read (malformed YAML, limits exceeded); breaches of the content rules are
// for Validate to report.
func Read(r io.Reader, limits Limits) (*Package, error) {
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

// ReadMeta reads a stream up to its meta object, which package builds put
// first, so that learning a package's kind rarely parses more than one
// document.
func ReadMeta(r io.Reader, limits Limits) (*Meta, error) {
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
