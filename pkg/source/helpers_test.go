package source_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// inProcessRegistry is the in-memory registry with the helpers these
// tests use.
type inProcessRegistry struct {
	*fixture.Registry
	host string
}

func newRegistry(t *testing.T) *inProcessRegistry {
	t.Helper()
	r := fixture.NewRegistry(t)
	return &inProcessRegistry{Registry: r, host: r.Host}
}

func (r *inProcessRegistry) push(t *testing.T, repoTag string, artifact remote.Taggable) string {
	t.Helper()
	ref := r.host + "/" + repoTag
	if err := fixture.Push(ref, artifact); err != nil {
		t.Fatal(err)
	}
	r.reset()
	return ref
}

func (r *inProcessRegistry) reset() { r.Reset() }

// requests returns the logged requests, the /v2/ ping left out.
func (r *inProcessRegistry) requests() []string {
	var out []string
	for _, l := range r.Requests() {
		if !strings.HasSuffix(l, " /v2/") {
			out = append(out, l)
		}
	}
	return out
}

func testOptions() source.Options {
	return source.Options{Keychain: authn.NewMultiKeychain()} // anonymous
}

// readAll opens src and returns its package.yaml, or the first error of
// opening, reading or closing it.
func readAll(t *testing.T, src string, o source.Options) (*source.Package, []byte, error) {
	t.Helper()
	p, err := source.Open(context.Background(), src, o)
	if err != nil {
		return nil, nil, err
	}
	if p.Stream() == nil {
		return p, nil, p.Close()
	}
	b, err := io.ReadAll(p.Stream())
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return p, b, err
}

func stream(t *testing.T, kind string) []byte {
	t.Helper()
	return []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: " + kind + "\nmetadata:\n  name: test\n")
}
