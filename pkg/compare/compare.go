// Package compare reads two packages from any sources at once and compares
// them as streams: what diff prints and what a plan checks an upgrade with.
package compare

import (
	"context"
	"fmt"
	"sync"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// PlanInput is what an upgrade or rollback plan needs of the two packages
// (Plan is the name of the plan itself, in pkg/action).
type PlanInput struct {
	Report *diff.Report
	// Old and New are what each package's definitions make, for
	// diff.Preflight and the CRDs whose stored versions to read.
	Old, New diff.Definitions
	// Meta is the new package's meta object; nil when it has none.
	Meta *xpkg.Meta
	// Infos say what was read for each side.
	Infos [2]source.Info
}

// ForPlan reads both packages as Stream does, in memory that does not
// grow with the packages, and keeps besides the report what a plan needs.
func ForPlan(ctx context.Context, args [2]string, opts [2]source.Options, limits xpkg.Limits) (*PlanInput, error) {
	in := &PlanInput{}
	var err error
	in.Report, in.Infos, err = compareStreams(ctx, args, opts, limits, func(x [2]*diff.Indexed) {
		in.Old, in.New, in.Meta = x[0].Definitions(), x[1].Definitions(), x[1].Meta()
	})
	if err != nil {
		return nil, err
	}
	return in, nil
}

// Stream reads both packages at once as streams, each into an index of
// its documents, and compares the indexes: the report the in-memory
// comparison (diff.Parse, diff.Compare) gives, in memory that does not
// grow with the packages.
func Stream(ctx context.Context, args [2]string, opts [2]source.Options, limits xpkg.Limits) (*diff.Report, [2]source.Info, error) {
	return compareStreams(ctx, args, opts, limits, nil)
}

// compareStreams indexes both packages at once and compares them; keep,
// when set, takes what it needs of the indexes before they are closed.
func compareStreams(ctx context.Context, args [2]string, opts [2]source.Options, limits xpkg.Limits, keep func([2]*diff.Indexed)) (*diff.Report, [2]source.Info, error) {
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
	if keep != nil {
		keep(x)
	}
	return r, infos, nil
}

// index opens a package and reads its stream into an index. A failure to
// verify what was read, found as the package closes, fails the read too,
// and the index is closed.
func index(ctx context.Context, arg string, o source.Options, limits xpkg.Limits) (*diff.Indexed, source.Info, error) {
	p, err := source.Open(ctx, arg, o)
	if err != nil {
		return nil, source.Info{}, err
	}
	defer p.Close()
	content, err := p.Content()
	if err != nil {
		return nil, p.Info, err
	}
	x, readErr := diff.Index(content, limits)
	err = p.Cause(readErr)
	if err == nil {
		err = p.Close()
	}
	if err != nil {
		if readErr == nil {
			x.Close()
		}
		return nil, p.Info, fmt.Errorf("%s: %w", arg, err)
	}
	return x, p.Info, nil
}

// Definitions reads one package as a stream and returns what its
// definitions make (the CRDs, MRDs, XRDs and claims), in memory that does
// not grow with the package.
func Definitions(ctx context.Context, arg string, o source.Options, limits xpkg.Limits) (diff.Definitions, error) {
	defs, _, err := DefinitionsAndMeta(ctx, arg, o, limits)
	return defs, err
}

// DefinitionsAndMeta is Definitions and the package's meta object (nil
// when it has none), from the one read.
func DefinitionsAndMeta(ctx context.Context, arg string, o source.Options, limits xpkg.Limits) (diff.Definitions, *xpkg.Meta, error) {
	x, _, err := index(ctx, arg, o, limits)
	if err != nil {
		return nil, nil, err
	}
	defer x.Close()
	defs, err := x.DefinitionsAlone()
	return defs, x.Meta(), err
}
