package action

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// MirrorCopy is one package copied: where to, and what it cost.
type MirrorCopy struct {
	Package *MirrorPackage
	Result  ocicopy.Result
}

// MirrorFailure is one package that was not mirrored, and why.
type MirrorFailure struct {
	Package *MirrorPackage
	Err     error
}

// MirrorResult is what a mirror did: only what is verified at the
// destination is in Copied.
type MirrorResult struct {
	Copied []MirrorCopy
	Failed []MirrorFailure
}

// Sent sums what the copies sent and found there already.
func (r *MirrorResult) Sent() (blobs, present int, bytes int64, skipped int) {
	for _, c := range r.Copied {
		blobs += c.Result.BlobsSent
		present += c.Result.BlobsPresent
		bytes += c.Result.BytesSent
		if c.Result.Skipped {
			skipped++
		}
	}
	return blobs, present, bytes, skipped
}

// MirrorError says which packages were not mirrored; the others were,
// and a run again sends only what is missing. It does not unwrap to the
// first failure: the line it makes says more than that failure's own.
type MirrorError struct {
	Total  int
	Failed []MirrorFailure
}

func (e *MirrorError) Error() string {
	f := e.Failed[0]
	more := ""
	if len(e.Failed) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Failed)-1)
	}
	next := "run the command again to finish (what is there is not sent again)"
	if ocicopy.CorruptSource(f.Err) {
		next = "a run again fails the same way until the source serves the content its digest names"
	}
	return fmt.Sprintf("%d of %d package(s) not mirrored: %s: %s%s; %s", len(e.Failed), e.Total, f.Package.Ref(), exit.Message(f.Err), more, next)
}

// Run copies the plan's packages, Jobs at once, each verified at its
// destination; packages that fail do not stop the others.
func (m *Mirror) Run(ctx context.Context, plan *MirrorPlan) (*MirrorResult, error) {
	to, err := m.target()
	if err != nil {
		return nil, err
	}
	reg, err := m.registry(ctx)
	if err != nil {
		return nil, err
	}
	res := &MirrorResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(m.Jobs, 1))
	for _, p := range plan.Packages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r, err := m.copyOne(ctx, reg, to, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Failed = append(res.Failed, MirrorFailure{Package: p, Err: err})
				return
			}
			p.Platforms = r.Image.Platforms
			c := MirrorCopy{Package: p, Result: r}
			res.Copied = append(res.Copied, c)
			if m.OnCopied != nil {
				m.OnCopied(c)
			}
		}()
	}
	wg.Wait()
	if len(res.Failed) > 0 {
		if ctx.Err() != nil {
			return res, fmt.Errorf("interrupted: %d of %d package(s) mirrored; run the command again to finish: %w", len(res.Copied), len(plan.Packages), ctx.Err())
		}
		return res, &MirrorError{Total: len(plan.Packages), Failed: res.Failed}
	}
	return res, nil
}

// target is where copies go: a layout, or nil for a registry.
func (m *Mirror) target() (*ocicopy.Layout, error) {
	if m.ToLayout == "" {
		return nil, nil
	}
	return ocicopy.OpenLayout(m.ToLayout)
}

func (m *Mirror) copier() *ocicopy.Copier {
	return &ocicopy.Copier{OnProgress: m.OnProgress}
}

// copyOne copies p from where it was read to its destination.
func (m *Mirror) copyOne(ctx context.Context, reg *resolve.Registry, layout *ocicopy.Layout, p *MirrorPackage) (ocicopy.Result, error) {
	src, err := m.sourceOf(ctx, reg, p)
	if err != nil {
		return ocicopy.Result{}, err
	}
	if layout != nil {
		return m.copier().ToLayout(ctx, src, layout, p.Ref())
	}
	dst, err := source.ParseReferenceFor(p.Destination, m.Destination)
	if err != nil {
		return ocicopy.Result{}, err
	}
	return m.copier().ToRegistry(ctx, src, dst, m.Destination)
}

// sourceOf is p at its digest, where it is read: the layout's entry, or
// the registry (through the cluster's ImageConfigs with --from-cluster).
func (m *Mirror) sourceOf(ctx context.Context, reg *resolve.Registry, p *MirrorPackage) (ocicopy.Source, error) {
	d, err := v1.NewHash(p.Digest)
	if err != nil {
		return ocicopy.Source{}, fmt.Errorf("%s: digest %q: %w", p.Ref(), p.Digest, err)
	}
	if m.FromLayout != "" {
		return ocicopy.Source{LayoutDir: m.FromLayout, Digest: d}, nil
	}
	pinned := strings.SplitN(p.Package, "@", 2)[0] + "@" + p.Digest
	read, so, err := reg.LocateQuietly(ctx, pinned, nil)
	if err != nil {
		return ocicopy.Source{}, err
	}
	ref, err := source.ParseReferenceFor(read, so)
	if err != nil {
		return ocicopy.Source{}, err
	}
	if _, ok := ref.(name.Digest); !ok {
		return ocicopy.Source{}, fmt.Errorf("%s: an ImageConfig rewrote it to %s, which names no digest", pinned, read)
	}
	return ocicopy.Source{Ref: ref, Options: so, Digest: d}, nil
}
