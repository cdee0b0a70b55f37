package resolve

import (
	"context"
	"slices"
	"sync"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// Repository is what one read of a repository found: its tags, newest
// first, and the digests of the tags asked for.
type Repository struct {
	// Reader read it: a version's meta object is read through it too.
	Reader  *source.Reader
	Tags    []versions.Tag
	Digests map[string]string
	Err     error
}

// ReadRepository lists a repository's tags and resolves the tags asked
// for (their digests); repo is where to read it (after an ImageConfig's
// rewrite). One reader: the tag list and the HEADs share a connection and
// a registry token.
func ReadRepository(ctx context.Context, repo string, tags []string, so source.Options) Repository {
	rd, err := source.NewReader(ctx, so)
	if err != nil {
		return Repository{Err: err}
	}
	names, err := rd.ListTags(ctx, repo)
	if err != nil {
		return Repository{Err: err}
	}
	r := Repository{Reader: rd, Tags: versions.Sort(names), Digests: map[string]string{}}
	for _, tag := range tags {
		if r.Digests[tag], err = rd.Digest(ctx, repo+":"+tag); err != nil {
			return Repository{Err: err}
		}
	}
	return r
}

// SharedReads are the registry reads of a fleet's members (outdated on
// several clusters): a repository's tags, a tag's digest and a version's
// meta object are read once for every member that reads the same
// reference (after its ImageConfigs) with the same credentials; a member
// whose ImageConfigs send it elsewhere, or whose pull secrets hold other
// credentials, reads for itself. A read under way is waited for, not
// made again. The zero value is ready; nil shares nothing.
type SharedReads struct {
	mu    sync.Mutex
	calls map[string]*sharedCall
	made  int
}

type sharedCall struct {
	done chan struct{}
	val  any
	err  error
}

// Made is how many reads were made (each shared read counts once).
func (s *SharedReads) Made() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.made
}

// do runs fn once per key and hands every caller its result (failures
// too: a registry that did not answer one member would not answer the
// next).
func (s *SharedReads) do(ctx context.Context, key string, fn func() (any, error)) (any, error) {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]*sharedCall{}
	}
	c, ok := s.calls[key]
	if !ok {
		c = &sharedCall{done: make(chan struct{})}
		s.calls[key] = c
		s.made++
		s.mu.Unlock()
		c.val, c.err = fn()
		close(c.done)
		return c.val, c.err
	}
	s.mu.Unlock()
	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Repository is ReadRepository of at, shared: one reader per reference
// and credentials (it keeps their connection and registry token), one
// tag list, one digest per tag.
func (s *SharedReads) Repository(ctx context.Context, at At, tags []string) Repository {
	key := at.Creds + " " + at.Ref
	v, err := s.do(ctx, "reader "+key, func() (any, error) { return source.NewReader(ctx, at.Options) })
	if err != nil {
		return Repository{Err: err}
	}
	rd := v.(*source.Reader)
	v, err = s.do(ctx, "tags "+key, func() (any, error) {
		names, err := rd.ListTags(ctx, at.Ref)
		return versions.Sort(names), err
	})
	if err != nil {
		return Repository{Err: err}
	}
	r := Repository{Reader: rd, Tags: slices.Clone(v.([]versions.Tag)), Digests: map[string]string{}}
	for _, tag := range tags {
		ref := at.Ref + ":" + tag
		d, err := s.do(ctx, "digest "+at.Creds+" "+ref, func() (any, error) { return rd.Digest(ctx, ref) })
		if err != nil {
			return Repository{Err: err}
		}
		r.Digests[tag] = d.(string)
	}
	return r
}

// meta is ReadMetaAt, shared.
func (s *SharedReads) meta(ctx context.Context, at At, read func() MetaRead) MetaRead {
	v, _ := s.do(ctx, "meta "+at.Creds+" "+at.Ref, func() (any, error) { return read(), nil })
	if m, ok := v.(MetaRead); ok {
		return m
	}
	return MetaRead{Err: "cannot be read: " + ctx.Err().Error()}
}
