// Package xpkg is the Crossplane package format: it reads a package.yaml
// stream one document at a time into typed objects, finds the package's meta
// object (Provider, Configuration or Function in meta.pkg.crossplane.io or
// meta.pkg.ibm.crossplane.io), and checks the xpkg specification's content
// rules. It is pure: it reads an io.Reader and knows nothing of registries,
// files or clusters.
package xpkg

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg/fastyaml"
)

// Limits bound the work a hostile stream can cause.
type Limits struct {
	// MaxDocumentBytes is the largest single YAML document accepted.
	MaxDocumentBytes int
	// MaxDocuments is the most documents a stream may hold.
	MaxDocuments int
}

// DefaultLimits are generous for real packages (provider-aws's largest CRD
// is under 1 MiB) and still stop a hostile stream early.
var DefaultLimits = Limits{MaxDocumentBytes: 32 << 20, MaxDocuments: 100000}

// Object is one document of a package stream.
type Object struct {
	// Index is the document's position in the stream, counting from 0 and
	// skipping empty documents.
	Index int
	// Raw is the document exactly as it appears in the stream.
	Raw []byte
	// Content is the document decoded into JSON-compatible values.
	Content map[string]any
}

// GVK is the document's apiVersion and kind.
func (o *Object) GVK() schema.GroupVersionKind {
	av, _ := o.Content["apiVersion"].(string)
	k, _ := o.Content["kind"].(string)
	return schema.FromAPIVersionAndKind(av, k)
}

// Name is the document's metadata.name.
func (o *Object) Name() string {
	md, _ := o.Content["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

// String names the document in messages: `document 3 (CustomResourceDefinition buckets.s3.aws)`.
func (o *Object) String() string {
	kind, name := o.GVK().Kind, o.Name()
	switch {
	case kind == "" && name == "":
		return fmt.Sprintf("document %d", o.Index)
	case name == "":
		return fmt.Sprintf("document %d (%s)", o.Index, kind)
	}
	return fmt.Sprintf("document %d (%s %s)", o.Index, kind, name)
}

// Decoder reads a package stream one document at a time, holding only the
// current document in memory.
type Decoder struct {
	r      *bufio.Reader
	limits Limits
	index  int
	// raw counts every document read, empty ones included.
	raw  int
	done bool
	// reuse, when set, holds every document NextRaw returns, in turn: a
	// document is then the caller's only until the next call.
	reuse *bytes.Buffer
}

// NewDecoder reads the stream from r within limits.
func NewDecoder(r io.Reader, limits Limits) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10), limits: limits}
}

// Next returns the next non-empty document, or io.EOF after the last one.
func (d *Decoder) Next() (*Object, error) {
	for {
		raw, err := d.NextRaw()
		if err != nil {
			return nil, err
		}
		obj, err := decode(d.index, raw, d.limits)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			continue // only comments or whitespace
		}
		d.index++
		return obj, nil
	}
}

// NextRaw returns the next document's bytes without decoding them; empty
// documents are included.
func (d *Decoder) NextRaw() ([]byte, error) {
	if d.done {
		return nil, io.EOF
	}
	// Documents holding only comments count too: they cost reading.
	if d.limits.MaxDocuments > 0 && (d.index >= d.limits.MaxDocuments || d.raw >= 2*d.limits.MaxDocuments) {
		return nil, fmt.Errorf("the stream holds more than %d documents", d.limits.MaxDocuments)
	}
	d.raw++
	doc := &bytes.Buffer{}
	if d.reuse != nil {
		doc = d.reuse
		doc.Reset()
	}
	lineStart := true
	for {
		line, err := d.r.ReadSlice('\n')
		atStart := lineStart
		lineStart = !errors.Is(err, bufio.ErrBufferFull)
		if !lineStart {
			err = nil // a line longer than the buffer: keep reading it
		}
		if atStart && isSeparator(line) {
			if doc.Len() == 0 {
				continue // a separator at the start of the stream
			}
			return doc.Bytes(), nil
		}
		doc.Write(line)
		if d.limits.MaxDocumentBytes > 0 && doc.Len() > d.limits.MaxDocumentBytes {
			return nil, fmt.Errorf("document %d is larger than %d bytes", d.index, d.limits.MaxDocumentBytes)
		}
		if errors.Is(err, io.EOF) {
			d.done = true
			if doc.Len() == 0 {
				return nil, io.EOF
			}
			return doc.Bytes(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("read document %d: %w", d.index, err)
		}
	}
}

// isSeparator matches a "---" line, optionally followed by spaces or a
// comment: the rule Kubernetes' (and so Crossplane's) YAML reader applies.
func isSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// decode parses one document; nil means it held no data.
func decode(index int, raw []byte, limits Limits) (*Object, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	// The fast decoder reads the block-style YAML package builds write and
	// answers exactly as sigs.k8s.io/yaml would, or declines.
	v, ok := fastyaml.Decode(raw)
	if !ok {
		var err error
		if v, err = decodeSlowly(raw, limits.MaxDocumentBytes); err != nil {
			return nil, &SyntaxError{Document: index, Err: err}
		}
	}
	if v == nil {
		return nil, nil
	}
	content, ok := v.(map[string]any)
	if !ok {
		return nil, &SyntaxError{Document: index, Err: fmt.Errorf("not a YAML mapping but a %s", yamlType(v))}
	}
	return &Object{Index: index, Raw: raw, Content: content}, nil
}

func yamlType(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, int64, int:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// SyntaxError is a document that is not a YAML mapping: the stream breaks
// the rule that package.yaml holds a valid YAML stream of objects.
type SyntaxError struct {
	Document int
	Err      error
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("document %d: %v", e.Document, e.Err) }
func (e *SyntaxError) Unwrap() error { return e.Err }
