package action

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// credsUser are the user's own registry credentials (the same for every
// cluster of a fleet: one process, one docker config).
const credsUser = "user"

// clusterCreds names the credentials a cluster's pull secrets (kc) give
// for ref's registry: "user" when they give none (the user's own apply),
// else "secret:" and a hash of the credentials themselves, so that two
// clusters share a read only when they would send the same credentials;
// "" when that cannot be told (no sharing).
func clusterCreds(kc authn.Keychain, ref string, so source.Options) string {
	r, err := source.ParseReferenceFor(ref, so)
	if err != nil {
		return ""
	}
	a, err := kc.Resolve(r.Context())
	if err != nil {
		return ""
	}
	if a == authn.Anonymous {
		return credsUser
	}
	cfg, err := a.Authorization()
	if err != nil || cfg == nil {
		return ""
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return "secret:" + hex.EncodeToString(sum[:])
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

// repository is readRepository, shared: one reader per reference and
// credentials (it keeps their connection and registry token), one tag
// list, one digest per tag.
func (s *SharedReads) repository(ctx context.Context, at readAt, items []*Item) repoRead {
	key := at.creds + " " + at.ref
	v, err := s.do(ctx, "reader "+key, func() (any, error) { return source.NewReader(ctx, at.so) })
	if err != nil {
		return repoRead{err: err}
	}
	rd := v.(*source.Reader)
	v, err = s.do(ctx, "tags "+key, func() (any, error) {
		names, err := rd.ListTags(ctx, at.ref)
		return versions.Sort(names), err
	})
	if err != nil {
		return repoRead{err: err}
	}
	r := repoRead{reader: rd, tags: slices.Clone(v.([]versions.Tag)), digests: map[string]string{}}
	for _, it := range items {
		if it.Pinned || strings.HasPrefix(it.Current, "sha256:") {
			continue
		}
		if _, done := r.digests[it.Current]; done {
			continue
		}
		tag := at.ref + ":" + it.Current
		d, err := s.do(ctx, "digest "+at.creds+" "+tag, func() (any, error) { return rd.Digest(ctx, tag) })
		if err != nil {
			return repoRead{err: err}
		}
		r.digests[it.Current] = d.(string)
	}
	return r
}

// meta is readMetaAt, shared.
func (s *SharedReads) meta(ctx context.Context, at readAt, read func() metaRead) metaRead {
	v, _ := s.do(ctx, "meta "+at.creds+" "+at.ref, func() (any, error) { return read(), nil })
	if m, ok := v.(metaRead); ok {
		return m
	}
	return metaRead{err: "cannot be read: " + ctx.Err().Error()}
}
