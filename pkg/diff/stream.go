package diff

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

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
		doc := indexedDoc{index: i, off: off, size: len(raw), sum: sha256.Sum256(raw)}
		if h, ok := xpkg.ReadHeader(raw); ok {
			doc.isObject = true
			if h.IsMeta() {
				doc.parsed = true
				doc.err = x.keepMeta(i, raw)
			} else {
				doc.key = key2(h.GVK().GroupKind().String(), h.Name)
			}
		} else {
			doc.parsed = true
			o, err := xpkg.DecodeDocument(i, raw, x.limits)
			switch {
			case err != nil:
				doc.err = err
			case o == nil: // comments only
			case xpkg.IsMeta(o):
				doc.isObject = true
				if x.meta == nil {
					x.meta = xpkg.NewMeta(o)
				}
			default:
				doc.isObject, doc.key = true, key(o)
			}
		}
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

// keepMeta decodes a meta object and keeps the first.
func (x *Indexed) keepMeta(i int, raw []byte) error {
	o, err := xpkg.DecodeDocument(i, raw, x.limits)
	if err != nil {
		return err
	}
	if x.meta == nil && o != nil {
		x.meta = xpkg.NewMeta(o)
	}
	return nil
}

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

// CompareIndexed compares two indexed packages and reports exactly what
// Compare reports of the same packages parsed whole (and fails where Parse
// fails: on the first document, old package first, that does not decode).
// Every distinct document is decoded once, one at a time on every CPU, and
// dropped when its pair is compared: an object that did not change costs
// the hash that says so.
func CompareIndexed(old, new *Indexed) (*Report, error) {
	sides := [2]*Indexed{old, new}
	// A document's bytes are decoded, and any error reported, where they
	// first occur: in the old package before the new, as Parse does.
	first := map[[sha256.Size]byte]docRef{}
	for s, x := range sides {
		for i := range x.docs {
			if _, ok := first[x.docs[i].sum]; !ok {
				first[x.docs[i].sum] = docRef{s, i}
			}
		}
	}
	olds, news := old.objects(), new.objects()
	oldKeys, newKeys := sortedIndexKeys(olds), sortedIndexKeys(news)

	// The work: the pairs that differ, the objects removed and added, and
	// every other distinct document, decoded only to check it decodes.
	type task struct {
		o, n   int // document indexes; -1 for none
		result *ObjectDiff
	}
	var pairs, removedT, addedT []*task
	checked := map[[sha256.Size]byte]bool{}
	unchanged := 0
	for _, k := range oldKeys {
		o := olds[k]
		n, ok := news[k]
		switch {
		case !ok:
			removedT = append(removedT, &task{o: o, n: -1})
			checked[old.docs[o].sum] = true
		case old.docs[o].sum == new.docs[n].sum:
			unchanged++ // still decoded once, below, to check it decodes
		default:
			pairs = append(pairs, &task{o: o, n: n})
			checked[old.docs[o].sum], checked[new.docs[n].sum] = true, true
		}
	}
	for _, k := range newKeys {
		if _, ok := olds[k]; !ok {
			addedT = append(addedT, &task{o: -1, n: news[k]})
			checked[new.docs[news[k]].sum] = true
		}
	}
	var checks []docRef
	for s, x := range sides {
		for i, d := range x.docs {
			if first[d.sum] == (docRef{s, i}) && !d.parsed && !checked[d.sum] {
				checks = append(checks, docRef{s, i})
			}
		}
	}
	all := slices.Concat(pairs, removedT, addedT)

	var mu sync.Mutex
	var errs []docError
	decode := func(s, i int) *xpkg.Object {
		d := &sides[s].docs[i]
		at := first[d.sum]
		f := &sides[at.side].docs[at.i] // the same bytes, where they first occur
		if f.err != nil {               // decoded while indexing, and failed
			mu.Lock()
			errs = append(errs, docError{at, f.err})
			mu.Unlock()
			return nil
		}
		o, err := sides[s].decode(d, f.index)
		if err != nil {
			mu.Lock()
			errs = append(errs, docError{at, err})
			mu.Unlock()
			return nil
		}
		return o
	}
	parallel(len(all)+len(checks), func(k int) {
		if k >= len(all) {
			c := checks[k-len(all)]
			decode(c.side, c.i)
			return
		}
		t := all[k]
		var o, n *xpkg.Object
		if t.o >= 0 {
			if o = decode(0, t.o); o == nil {
				return
			}
		}
		if t.n >= 0 {
			if n = decode(1, t.n); n == nil {
				return
			}
		}
		switch {
		case n == nil:
			d := removed(o)
			t.result = &d
		case o == nil:
			d := added(n)
			t.result = &d
		default:
			t.result = compareObject(o, n)
		}
		detach(t.result)
	})
	// Documents decoded while indexing that hold errors fail too.
	for s, x := range sides {
		for i, d := range x.docs {
			if d.err != nil && first[d.sum] == (docRef{s, i}) {
				errs = append(errs, docError{docRef{s, i}, d.err})
			}
		}
	}
	if len(errs) > 0 {
		e := slices.MinFunc(errs, func(a, b docError) int {
			if a.at.side != b.at.side {
				return a.at.side - b.at.side
			}
			return a.at.i - b.at.i
		})
		return nil, fmt.Errorf("%s package: %w", [2]string{"old", "new"}[e.at.side], e.err)
	}

	r := &Report{}
	if old.meta != nil {
		r.Old = Side{Kind: old.meta.Kind, Name: old.meta.Name()}
	}
	if new.meta != nil {
		r.New = Side{Kind: new.meta.Kind, Name: new.meta.Name()}
	}
	if old.meta != nil && new.meta != nil {
		r.Package = compareMeta(old.meta, new.meta)
	}
	for _, t := range removedT {
		r.Objects = append(r.Objects, *t.result)
	}
	changed := 0
	for _, t := range pairs {
		if t.result != nil {
			r.Objects = append(r.Objects, *t.result)
			changed++
		}
	}
	slices.SortStableFunc(r.Objects, cmpLabel)
	for _, t := range addedT {
		r.Objects = append(r.Objects, *t.result)
	}
	r.summarize(unchanged + len(pairs) - changed)
	return r, nil
}

// detach copies the strings a result keeps: decoded values share their
// document's bytes, and a name kept for the report would keep the whole
// document in memory with it.
func detach(d *ObjectDiff) {
	if d == nil {
		return
	}
	d.APIVersion, d.Kind, d.Name, d.Status, d.Diff = strings.Clone(d.APIVersion), strings.Clone(d.Kind), strings.Clone(d.Name), strings.Clone(d.Status), strings.Clone(d.Diff)
	for i := range d.Changes {
		c := &d.Changes[i]
		c.Version, c.Path, c.Message, c.Rule = strings.Clone(c.Version), strings.Clone(c.Path), strings.Clone(c.Message), strings.Clone(c.Rule)
	}
}

// docError is a document that does not decode, where it first occurs.
type docError struct {
	at  docRef
	err error
}

func sortedIndexKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
