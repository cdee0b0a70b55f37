// Package manifest reads the Kubernetes manifests a user names with -f, as
// kubectl diff -f does (files, directories, - for standard input), and keeps
// the Crossplane package objects in them: Provider, Configuration and
// Function in pkg.crossplane.io or pkg.ibm.crossplane.io. It is pure: it
// reads files and a reader, never the network or a cluster.
package manifest

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Object is one package manifest and where it was read.
type Object struct {
	// Source is the file's path as named (joined under its directory), or
	// "<stdin>".
	Source string
	// Line is the 1-based line in Source where its YAML document's content
	// starts: blank and comment lines before it are skipped, so the line
	// points at the object. A List's items share the List's line.
	Line int
	*unstructured.Unstructured
}

// Where names the object's place for messages: "path:line".
func (o Object) Where() string { return fmt.Sprintf("%s:%d", o.Source, o.Line) }

// Set is what a Read found.
type Set struct {
	// Packages are the package objects, in the order read.
	Packages []Object
	// Compositions are the apiextensions.crossplane.io Compositions, in
	// the order read (what an activation plan reads); Ignored counts them.
	Compositions []Object
	// Policies are the ManagedResourceActivationPolicies, in the order
	// read; Ignored counts them.
	Policies []Object
	// Ignored counts the objects that are no package; a List counts as its
	// items, one each.
	Ignored int
	// IgnoredKinds counts the ignored objects by kind, for a one-line
	// summary. A kind that a package also has (a crossplane.yaml's
	// meta.pkg.crossplane.io Provider) is qualified by its group, so it
	// is not taken for a package: "Provider.meta.pkg.crossplane.io".
	IgnoredKinds map[string]int
}

// Options tune a Read.
type Options struct {
	// Recursive also reads every subdirectory of a directory, as kubectl -R.
	Recursive bool
	// Stdin is read for the path "-".
	Stdin io.Reader
	// MaxBytes bounds each file (and standard input); 0 means
	// DefaultMaxBytes.
	MaxBytes int64
}

// DefaultMaxBytes is far above any real manifest file (a kustomize build of
// a large platform is a few MiB) and stops a hostile one before it fills
// memory.
const DefaultMaxBytes int64 = 64 << 20

// maxErrors is how many errors a Read reports one by one; the rest are
// counted, so a wrong directory does not flood the terminal.
const maxErrors = 20

// StdinSource is the Source of objects read from standard input.
const StdinSource = "<stdin>"

// Read reads every path (a file, a directory, or "-" for opts.Stdin) and
// returns the package objects in them. On any error it returns the errors
// found, one line each (the first 20, then a count), and no Set.
func Read(paths []string, opts Options) (*Set, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	r := newReader(opts)
	for _, p := range paths {
		r.readPath(p)
	}
	r.checkDuplicates()
	if err := r.err(); err != nil {
		return nil, err
	}
	return &r.set, nil
}

// reader holds one Read's state.
type reader struct {
	opts Options
	set  Set
	// errs are the first maxErrors errors; more counts the rest, which are
	// not kept: a hostile file can hold millions.
	errs []error
	more int
	// files are the files already read (by absolute path), so a file named
	// twice, or named and inside a directory also named, is read once and
	// its packages are not reported as defined twice.
	files     map[string]bool
	stdinRead bool
}

func newReader(opts Options) *reader {
	return &reader{opts: opts, set: Set{IgnoredKinds: map[string]int{}}, files: map[string]bool{}}
}

// fail records an error.
func (r *reader) fail(err error) {
	if len(r.errs) == maxErrors {
		r.more++
		return
	}
	r.errs = append(r.errs, err)
}

// errorf records an error about a place in a file.
func (r *reader) errorf(source string, line int, format string, args ...any) {
	r.fail(fmt.Errorf("%s:%d: %s", source, line, oneLine(fmt.Sprintf(format, args...))))
}

// pathError records an error about a whole path.
func (r *reader) pathError(path string, format string, args ...any) {
	r.fail(fmt.Errorf("%s: %s", path, oneLine(fmt.Sprintf(format, args...))))
}

// err joins the errors kept, one a line, and counts the rest.
func (r *reader) err() error {
	switch r.more {
	case 0:
	case 1:
		return errors.Join(append(r.errs, errors.New("and 1 more error"))...)
	default:
		return errors.Join(append(r.errs, fmt.Errorf("and %d more errors", r.more))...)
	}
	return errors.Join(r.errs...)
}

// checkDuplicates reports every package defined more than once, naming all
// its places. Packages are cluster-scoped, so the namespace does not count.
func (r *reader) checkDuplicates() {
	places := map[string][]string{}
	var order []string
	for _, o := range r.set.Packages {
		k := o.GroupVersionKind().Group + "/" + o.GetKind() + "/" + o.GetName()
		if places[k] == nil {
			order = append(order, k)
		}
		places[k] = append(places[k], o.Where())
	}
	for _, k := range order {
		ps := places[k]
		if len(ps) < 2 {
			continue
		}
		parts := strings.SplitN(k, "/", 3)
		times := "twice"
		if len(ps) > 2 {
			times = fmt.Sprintf("%d times", len(ps))
		}
		r.fail(fmt.Errorf("%s/%s is defined %s: %s; keep one",
			strings.ToLower(parts[1]), parts[2], times, listPlaces(ps)))
	}
}

// maxPlaces is how many places of a duplicate package an error names.
const maxPlaces = 5

// listPlaces joins places as "a, b and c", naming at most maxPlaces.
func listPlaces(ps []string) string {
	if len(ps) > maxPlaces {
		return strings.Join(ps[:maxPlaces], ", ") + fmt.Sprintf(" and %d more", len(ps)-maxPlaces)
	}
	return strings.Join(ps[:len(ps)-1], ", ") + " and " + ps[len(ps)-1]
}

// oneLine folds a multi-line message (some YAML errors have several) into
// one line, so that each error is one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for _, l := range strings.FieldsFunc(s, func(c rune) bool { return c == '\n' || c == '\r' }) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
