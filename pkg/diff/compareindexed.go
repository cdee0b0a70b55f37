package diff

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// CompareIndexed compares two indexed packages and reports exactly what
// Compare reports of the same packages parsed whole (and fails where Parse
// fails: on the first document, old package first, that does not decode).
// Every distinct document is decoded once, one at a time on every CPU, and
// dropped when its pair is compared: an object that did not change costs
// the hash that says so. On success each side's Definitions are set too,
// from the same decodings.
func CompareIndexed(old, new *Indexed) (*Report, error) {
	c := newComparison(old, new)
	w := c.plan()
	c.run(w)
	if err := c.err(); err != nil {
		return nil, err
	}
	c.gather()
	return c.report(w), nil
}

// comparison is one CompareIndexed at work.
type comparison struct {
	sides [2]*Indexed
	// first is where each distinct document first occurs: its bytes are
	// decoded, and any error reported, there, in the old package before
	// the new, as Parse does.
	first map[[sha256.Size]byte]docRef
	mu    sync.Mutex
	errs  []docError
	// learned is every definition decoded, by document hash.
	learned map[[sha256.Size]byte]definition
}

// task is one object to compare: o and n are document indexes, -1 for
// none.
type task struct {
	o, n   int
	result *ObjectDiff
}

// work is what a comparison decodes: the pairs that differ, the objects
// removed and added, and every other distinct document, decoded only to
// check it decodes.
type work struct {
	pairs, removals, additions []*task
	checks                     []docRef
	unchanged                  int
}

func newComparison(old, new *Indexed) *comparison {
	c := &comparison{sides: [2]*Indexed{old, new}, first: map[[sha256.Size]byte]docRef{}, learned: map[[sha256.Size]byte]definition{}}
	for s, x := range c.sides {
		for i := range x.docs {
			if _, ok := c.first[x.docs[i].sum]; !ok {
				c.first[x.docs[i].sum] = docRef{s, i}
			}
		}
		for sum, def := range x.learned {
			c.learned[sum] = def
		}
	}
	return c
}

// plan matches the objects by key and lists what to decode.
func (c *comparison) plan() work {
	old, new := c.sides[0], c.sides[1]
	olds, news := old.objects(), new.objects()
	var w work
	checked := map[[sha256.Size]byte]bool{}
	for _, k := range sortedIndexKeys(olds) {
		o := olds[k]
		n, ok := news[k]
		switch {
		case !ok:
			w.removals = append(w.removals, &task{o: o, n: -1})
			checked[old.docs[o].sum] = true
		case old.docs[o].sum == new.docs[n].sum:
			w.unchanged++ // still decoded once, below, to check it decodes
		default:
			w.pairs = append(w.pairs, &task{o: o, n: n})
			checked[old.docs[o].sum], checked[new.docs[n].sum] = true, true
		}
	}
	for _, k := range sortedIndexKeys(news) {
		if _, ok := olds[k]; !ok {
			w.additions = append(w.additions, &task{o: -1, n: news[k]})
			checked[new.docs[news[k]].sum] = true
		}
	}
	for s, x := range c.sides {
		for i, d := range x.docs {
			if c.first[d.sum] == (docRef{s, i}) && !d.parsed && !checked[d.sum] {
				w.checks = append(w.checks, docRef{s, i})
			}
		}
	}
	return w
}

// run decodes and compares the work on every CPU.
func (c *comparison) run(w work) {
	all := slices.Concat(w.pairs, w.removals, w.additions)
	parallel(len(all)+len(w.checks), func(k int) {
		if k >= len(all) {
			ref := w.checks[k-len(all)]
			c.decode(ref.side, ref.i)
			return
		}
		t := all[k]
		var o, n *xpkg.Object
		if t.o >= 0 {
			if o = c.decode(0, t.o); o == nil {
				return
			}
		}
		if t.n >= 0 {
			if n = c.decode(1, t.n); n == nil {
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
}

// decode decodes a document, keeps what a definition says for
// Definitions, and records an error where the document's bytes first
// occur; nil when it fails.
func (c *comparison) decode(s, i int) *xpkg.Object {
	d := &c.sides[s].docs[i]
	at := c.first[d.sum]
	f := &c.sides[at.side].docs[at.i] // the same bytes, where they first occur
	err := f.err                      // decoded while indexing, and failed
	var o *xpkg.Object
	if err == nil {
		o, err = c.sides[s].decode(d, f.index)
	}
	if err != nil {
		c.mu.Lock()
		c.errs = append(c.errs, docError{at, err})
		c.mu.Unlock()
		return nil
	}
	if o != nil && isDefinition(o) {
		def := definitionOf(o)
		c.mu.Lock()
		c.learned[d.sum] = def
		c.mu.Unlock()
	}
	return o
}

// err is the error of the first document, old package first, that does
// not decode, documents decoded while indexing included.
func (c *comparison) err() error {
	errs := c.errs
	for s, x := range c.sides {
		for i, d := range x.docs {
			if d.err != nil && c.first[d.sum] == (docRef{s, i}) {
				errs = append(errs, docError{docRef{s, i}, d.err})
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	e := slices.MinFunc(errs, func(a, b docError) int {
		if a.at.side != b.at.side {
			return a.at.side - b.at.side
		}
		return a.at.i - b.at.i
	})
	return fmt.Errorf("%s package: %w", [2]string{"old", "new"}[e.at.side], e.err)
}

// gather sets each side's Definitions. A document is decoded once for all
// its occurrences (in both packages, or twice in one), so what it says is
// found by its hash, and applied in document order: a later definition of
// the same CRD name wins, as in DefinitionsOf.
func (c *comparison) gather() {
	for _, x := range c.sides {
		x.defs = Definitions{}
		for _, d := range x.docs {
			if def, ok := c.learned[d.sum]; ok {
				x.defs.add(def)
			}
		}
	}
}

// report assembles the results in Compare's order.
func (c *comparison) report(w work) *Report {
	old, new := c.sides[0], c.sides[1]
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
	for _, t := range w.removals {
		r.Objects = append(r.Objects, *t.result)
	}
	changed := 0
	for _, t := range w.pairs {
		if t.result != nil {
			r.Objects = append(r.Objects, *t.result)
			changed++
		}
	}
	slices.SortStableFunc(r.Objects, cmpLabel)
	for _, t := range w.additions {
		r.Objects = append(r.Objects, *t.result)
	}
	r.summarize(w.unchanged + len(w.pairs) - changed)
	return r
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
