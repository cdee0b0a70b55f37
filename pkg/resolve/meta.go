package resolve

import (
	"context"
	"io"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// MetaRead is a version's meta object, or why it could not be read (Err,
// a phrase: "cannot be read: …"). Both are empty for a legacy package,
// which has no dependsOn or constraint to check.
type MetaRead struct {
	Meta *xpkg.Meta
	Err  string
}

// MetaOptions say how ReadMeta reads.
type MetaOptions struct {
	// Limits bound the read (zero: the defaults).
	Limits xpkg.Limits
	// Reuse is the reader that listed the repository: its connection
	// and registry token (may be nil).
	Reuse *source.Reader
	// Shared, when set, shares the read with other clusters' (a fleet).
	Shared *SharedReads
}

// ReadMeta reads the meta object of the package ref names, as the
// package manager reads the package (ImageConfigs, the package's pull
// secrets), without the rest of its layer. Quietly, and so in any order:
// the read of its repository said how it reads.
func (r *Registry) ReadMeta(ctx context.Context, ref string, secrets []string, o MetaOptions) MetaRead {
	at, err := r.Resolve(ctx, ref, secrets, false)
	if err != nil {
		return MetaRead{Err: "cannot be read: " + exit.Message(err)}
	}
	if o.Reuse != nil {
		at.Options.Reuse = o.Reuse
	}
	read := func() MetaRead { return ReadMetaAt(ctx, at.Ref, at.Options, o.Limits) }
	if o.Shared == nil || at.Creds == "" {
		return read()
	}
	return o.Shared.meta(ctx, at, read)
}

// ReadMetaAt is ReadMeta of the reference to read (after the
// ImageConfigs) with its options.
func ReadMetaAt(ctx context.Context, read string, so source.Options, limits xpkg.Limits) MetaRead {
	p, err := source.Open(ctx, read, so)
	if err != nil {
		return MetaRead{Err: "cannot be read: " + exit.Message(err)}
	}
	defer p.Release()
	if p.Format == source.FormatLegacy {
		return MetaRead{}
	}
	if limits == (xpkg.Limits{}) {
		limits = xpkg.DefaultLimits
	}
	stream := &readFault{r: p.Stream()}
	meta, err := xpkg.ParseMeta(stream, limits)
	switch {
	case err == nil:
		return MetaRead{Meta: meta}
	case ctx.Err() != nil:
		return MetaRead{Err: "cannot be read: interrupted"}
	case stream.err != nil:
		// The registry failed the read (a stall, a source too slow, bytes
		// unlike the digest): no verdict on the package.
		return MetaRead{Err: "cannot be read: " + exit.Message(err)}
	}
	return MetaRead{Err: "is not a package Crossplane can install: " + exit.Message(err)}
}

// readFault keeps the error of a read of r, which tells a source that
// failed from content that is wrong.
type readFault struct {
	r   io.Reader
	err error
}

func (f *readFault) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}
