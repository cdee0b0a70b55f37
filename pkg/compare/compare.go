// Package compare reads two packages from any sources at once and compares
// them: what diff prints and what a plan checks an upgrade with.
package compare

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Result is two parsed packages and their comparison.
type Result struct {
	Old, New *xpkg.Package
	Report   *diff.Report
	// Infos say what was read for each side.
	Infos [2]source.Info
}

// Sources reads both packages at once, then parses and compares them.
func Sources(ctx context.Context, args [2]string, opts [2]source.Options, limits xpkg.Limits) (*Result, error) {
	var docs [2][][]byte
	var res Result
	var errs [2]error
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			docs[i], res.Infos[i], errs[i] = Documents(ctx, args[i], opts[i], limits)
		})
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			return nil, errs[i]
		}
	}
	var err error
	if res.Old, res.New, err = diff.Parse(docs[0], docs[1], limits); err != nil {
		return nil, err
	}
	res.Report = diff.Compare(res.Old, res.New)
	for i, s := range []*diff.Side{&res.Report.Old, &res.Report.New} {
		s.Source, s.Reference, s.Digest = args[i], res.Infos[i].Reference, res.Infos[i].Digest
	}
	return &res, nil
}

// Stream reads both packages at once as streams, each into an index of
// its documents, and compares the indexes: the report Sources gives, in
// memory that does not grow with the packages (diff's way; a plan needs
// the parsed packages Sources keeps).
func Stream(ctx context.Context, args [2]string, opts [2]source.Options, limits xpkg.Limits) (*diff.Report, [2]source.Info, error) {
	var x [2]*diff.Indexed
	var infos [2]source.Info
	var errs [2]error
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			x[i], infos[i], errs[i] = index(ctx, args[i], opts[i], limits)
		})
	}
	wg.Wait()
	defer func() {
		for _, ix := range x {
			if ix != nil {
				ix.Close()
			}
		}
	}()
	for i := range 2 {
		if errs[i] != nil {
			return nil, infos, errs[i]
		}
	}
	r, err := diff.CompareIndexed(x[0], x[1])
	if err != nil {
		return nil, infos, err
	}
	for i, s := range []*diff.Side{&r.Old, &r.New} {
		s.Source, s.Reference, s.Digest = args[i], infos[i].Reference, infos[i].Digest
	}
	return r, infos, nil
}

// index reads a package's stream into an index.
func index(ctx context.Context, arg string, o source.Options, limits xpkg.Limits) (*diff.Indexed, source.Info, error) {
	return readContent(ctx, arg, o, func(r io.Reader) (*diff.Indexed, error) { return diff.Index(r, limits) },
		func(x *diff.Indexed) { x.Close() })
}

// Documents reads a package's documents, unparsed.
func Documents(ctx context.Context, arg string, o source.Options, limits xpkg.Limits) ([][]byte, source.Info, error) {
	return readContent(ctx, arg, o, func(r io.Reader) ([][]byte, error) { return xpkg.Split(r, limits) }, nil)
}

// readContent opens a package and reads its content whole with read. A
// failure to verify what was read, found as the package closes, fails
// the read too, and what was read is released.
func readContent[T any](ctx context.Context, arg string, o source.Options, read func(io.Reader) (T, error), release func(T)) (T, source.Info, error) {
	var zero T
	p, err := source.Open(ctx, arg, o)
	if err != nil {
		return zero, source.Info{}, err
	}
	defer p.Close()
	content, err := p.Content()
	if err != nil {
		return zero, p.Info, err
	}
	v, readErr := read(content)
	err = p.Cause(readErr)
	if err == nil {
		err = p.Close()
	}
	if err != nil {
		if readErr == nil && release != nil {
			release(v)
		}
		return zero, p.Info, fmt.Errorf("%s: %w", arg, err)
	}
	return v, p.Info, nil
}
