package diff

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/tempfile"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Indexed is a package read as a stream for CompareIndexed, in memory that
// does not grow with the package: an index of its documents (their
// headers, the hash of their bytes and where those bytes are) and its meta
// object; the documents' bytes wait in an unlinked temporary file, to be
// read again only for the objects that differ.
type Indexed struct {
	docs   []indexedDoc
	meta   *xpkg.Meta
	spool  *os.File
	limits xpkg.Limits
	// learned holds the definitions among the documents decoded while
	// indexing, by document hash; CompareIndexed learns the others.
	learned map[[sha256.Size]byte]definition
	// defs is set by a CompareIndexed that succeeds.
	defs Definitions
}

// indexedDoc is one non-empty document of the stream.
type indexedDoc struct {
	index int   // as Split counts: documents that are not all whitespace
	off   int64 // where its bytes are in the spool
	size  int
	sum   [sha256.Size]byte
	// key is what Compare matches objects by ("" for the meta object and
	// for documents that hold no object); isObject says it is one.
	key      string
	isObject bool
	// parsed: the document was decoded while indexing (its header could
	// not be read without), so decoding it again checks nothing new; err
	// is what that decoding said.
	parsed bool
	err    error
}

// Index reads a package stream within limits. What Split refuses (limits,
// a broken read) fails it; documents that do not decode fail
// CompareIndexed, as they fail Parse. Close it when done.
func Index(r io.Reader, limits xpkg.Limits) (*Indexed, error) {
	spool, err := tempfile.Unlinked(".kubectl-xpkg-diff-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file for the package's documents: %w", err)
	}
	x := &Indexed{spool: spool, limits: limits}
	if err := x.read(r); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

func (x *Indexed) read(r io.Reader) error {
	w := bufio.NewWriterSize(x.spool, 256<<10)
	var off int64
	err := xpkg.EachDocument(r, x.limits, func(i int, raw []byte) error {
		doc := x.indexDoc(i, raw)
		doc.off = off
		if _, err := w.Write(raw); err != nil {
			return fmt.Errorf("write the package's documents to a temporary file: %w", err)
		}
		off += int64(len(raw))
		x.docs = append(x.docs, doc)
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the package's documents to a temporary file: %w", err)
	}
	return nil
}

// indexDoc reads a document's header; the meta object, and documents
// whose header the line scan cannot read, it decodes.
func (x *Indexed) indexDoc(i int, raw []byte) indexedDoc {
	doc := indexedDoc{index: i, size: len(raw), sum: sha256.Sum256(raw)}
	if h, ok := xpkg.ReadHeader(raw); ok && !h.IsMeta() {
		doc.isObject, doc.key = true, key2(h.GVK().GroupKind().String(), h.Name)
		return doc
	}
	doc.parsed = true
	o, err := xpkg.DecodeDocument(i, raw, x.limits)
	switch {
	case err != nil:
		doc.err = err
	case o == nil: // comments only
	case xpkg.IsMeta(o):
		doc.isObject = true
		x.keepMeta(o, raw)
	default:
		doc.isObject, doc.key = true, key(o)
		if isDefinition(o) {
			if x.learned == nil {
				x.learned = map[[sha256.Size]byte]definition{}
			}
			x.learned[doc.sum] = definitionOf(o)
		}
	}
	return doc
}

// keepMeta keeps the first meta object, with a copy of its bytes: raw is
// the stream reader's buffer, reused for the next document.
func (x *Indexed) keepMeta(o *xpkg.Object, raw []byte) {
	if x.meta == nil {
		o.Raw = bytes.Clone(raw)
		x.meta = xpkg.NewMeta(o)
	}
}

// Meta is the package's meta object (the first, as Parse keeps), known
// once indexed; nil when the package has none.
func (x *Indexed) Meta() *xpkg.Meta { return x.meta }

// Definitions is what the package's definitions make, as DefinitionsOf
// says of the package parsed whole. Its documents are only all decoded by
// CompareIndexed, so it is nil before one has succeeded; gathering it
// there costs no decoding of its own.
func (x *Indexed) Definitions() Definitions { return x.defs }

// DefinitionsAlone is Definitions for a package read by itself, with no
// comparison: only the documents whose header names a definition's kind
// are decoded (those decoded while indexing are not decoded again).
func (x *Indexed) DefinitionsAlone() (Definitions, error) {
	defs := Definitions{}
	for i := range x.docs {
		d := &x.docs[i]
		kind, _, _ := strings.Cut(d.key, ".")
		if !d.isObject || !definitionKinds[kind] {
			continue
		}
		if def, ok := x.learned[d.sum]; ok {
			defs.add(def)
			continue
		}
		if d.err != nil {
			return nil, d.err
		}
		o, err := x.decode(d, d.index)
		if err != nil {
			return nil, err
		}
		if o != nil && isDefinition(o) {
			defs.add(definitionOf(o))
		}
	}
	return defs, nil
}

// definitionKinds are the kinds isDefinition takes.
var definitionKinds = map[string]bool{"CustomResourceDefinition": true, "CompositeResourceDefinition": true, "ManagedResourceDefinition": true}

func key2(groupKind, name string) string { return groupKind + "/" + name }

// Close removes the temporary file.
func (x *Indexed) Close() error {
	if x.spool == nil {
		return nil
	}
	err := x.spool.Close()
	x.spool = nil
	return err
}

// decode reads a document's bytes back and decodes it; index names it in
// errors.
func (x *Indexed) decode(d *indexedDoc, index int) (*xpkg.Object, error) {
	raw := make([]byte, d.size)
	if _, err := x.spool.ReadAt(raw, d.off); err != nil {
		return nil, fmt.Errorf("read the package's documents back from a temporary file: %w", err)
	}
	return xpkg.DecodeDocument(index, raw, x.limits)
}

// objects maps keys to documents as Compare's index does: the meta object
// and documents without an object left out, a later document of the same
// key winning.
func (x *Indexed) objects() map[string]int {
	m := map[string]int{}
	for i, d := range x.docs {
		if d.isObject && d.key != "" {
			m[d.key] = i
		}
	}
	return m
}

// docRef is one document of one side: 0 old, 1 new.
type docRef struct{ side, i int }
