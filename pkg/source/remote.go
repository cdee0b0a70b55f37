package source

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// DefaultRegistry is where Crossplane's package manager resolves references
// that name no registry.
const DefaultRegistry = "xpkg.crossplane.io"

// RegistryEnvVar overrides DefaultRegistry.
const RegistryEnvVar = "XPKG_REGISTRY"

// DefaultRegistryFromEnv is $XPKG_REGISTRY, or DefaultRegistry.
func DefaultRegistryFromEnv() string {
	if r := os.Getenv(RegistryEnvVar); r != "" {
		return r
	}
	return DefaultRegistry
}

// ParseReference resolves a package reference the way the package manager
// does: without a registry host it lives on registry ("" means
// $XPKG_REGISTRY, else DefaultRegistry).
func ParseReference(arg, registry string) (name.Reference, error) {
	return parseReference(arg, registry, false)
}

// ParseReferenceFor is ParseReference with o's registry and, with
// o.Insecure, plain HTTP allowed whatever the host.
func ParseReferenceFor(arg string, o Options) (name.Reference, error) {
	return parseReference(arg, o.Registry, o.Insecure)
}

// parseReference is ParseReference; insecure (--insecure) makes the
// registry speak plain HTTP whatever its host, as documented.
func parseReference(arg, registry string, insecure bool) (name.Reference, error) {
	if registry == "" {
		registry = DefaultRegistryFromEnv()
	}
	opts := []name.Option{name.WithDefaultRegistry(registry)}
	if insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(arg, opts...)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a file, a directory nor a package reference: %w", arg, err)
	}
	return ref, nil
}

// RemoteOptions are the go-containerregistry options every registry request
// of the plugin uses: credentials, the plain-HTTP guard, retries of
// transient faults, the user agent.
func RemoteOptions(ctx context.Context, o Options) []remote.Option {
	o = o.withDefaults()
	rt := newRetryTransport(limitManifests(insecureTLS(o.Transport, o.Insecure), o.MaxManifestBytes), o.Retry)
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(o.Keychain),
		remote.WithTransport(&httpGuard{next: rt, insecure: o.Insecure}),
		remote.WithPlatform(*o.Platform),
		// The retry transport above does it, resuming broken blobs too.
		remote.WithRetryPredicate(func(error) bool { return false }),
		remote.WithRetryStatusCodes(),
	}
	if o.UserAgent != "" {
		opts = append(opts, remote.WithUserAgent(o.UserAgent))
	}
	if o.Reuse != nil {
		opts = append(opts, remote.Reuse(o.Reuse.puller))
	}
	return opts
}

func openRemote(ctx context.Context, arg string, o Options) (*Package, error) {
	ref, err := parseReference(arg, o.Registry, o.Insecure)
	if err != nil {
		return nil, err
	}
	info := Info{Source: arg, Type: TypeRegistry, Reference: ref.Name()}
	desc, err := remote.Get(ref, RemoteOptions(ctx, o)...)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref.Name(), err)
	}
	if !desc.MediaType.IsIndex() {
		img, err := desc.Image()
		if err != nil {
			return nil, fmt.Errorf("pull %s: %w", ref.Name(), err)
		}
		return openImage(img, info, o, true)
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref.Name(), err)
	}
	img, note, err := selectFromIndex(idx, *o.Platform, ref.Name())
	if err != nil {
		return nil, err
	}
	info.Notes = append(info.Notes, note)
	info.Image = indexInfo(idx)
	return openImage(img, info, o, true)
}

// httpGuard refuses plain HTTP to registries off loopback unless the user
// asked for --insecure: go-containerregistry would otherwise fall back to
// HTTP for private network addresses too.
type httpGuard struct {
	next     http.RoundTripper
	insecure bool
}

func (g *httpGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "http" && !g.insecure && !isLoopback(r.URL.Hostname()) {
		return nil, fmt.Errorf("refusing plain HTTP to %s: only loopback registries may use it without --insecure", r.URL.Host)
	}
	return g.next.RoundTrip(r)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// insecureTLS skips certificate verification when the user asked for it.
func insecureTLS(rt http.RoundTripper, insecure bool) http.RoundTripper {
	t, ok := rt.(*http.Transport)
	if !insecure || !ok {
		return rt
	}
	t = t.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{}
	}
	t.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // the user asked for --insecure
	return t
}

// ListTags lists the tags of a repository (a reference without tag or
// digest; one without a registry host resolves against o.Registry).
func ListTags(ctx context.Context, repo string, o Options) ([]string, error) {
	r, err := NewReader(ctx, o)
	if err != nil {
		return nil, err
	}
	return r.ListTags(ctx, repo)
}

// Digest resolves a reference to the digest of the manifest (or index)
// it names, as the package manager does before pulling: a HEAD request,
// or a GET when the registry refuses HEAD. A reference pinned by digest
// resolves to that digest without a request.
func Digest(ctx context.Context, ref string, o Options) (string, error) {
	r, err := NewReader(ctx, o)
	if err != nil {
		return "", err
	}
	return r.Digest(ctx, ref)
}

// Reader lists tags and resolves digests, reusing its connections and
// registry tokens across requests: reading a repository's tags and then
// the digest of one of them authenticates once.
type Reader struct {
	o      Options
	puller *remote.Puller
}

// NewReader returns a Reader with the options' credentials, guard and
// retries.
func NewReader(ctx context.Context, o Options) (*Reader, error) {
	o = o.withDefaults()
	o.Reuse = nil
	p, err := remote.NewPuller(RemoteOptions(ctx, o)...)
	if err != nil {
		return nil, err
	}
	return &Reader{o: o, puller: p}, nil
}

// ListTags lists the tags of a repository.
func (r *Reader) ListTags(ctx context.Context, repo string) ([]string, error) {
	opts := []name.Option{name.WithDefaultRegistry(r.o.Registry)}
	if r.o.Insecure {
		opts = append(opts, name.Insecure)
	}
	rp, err := name.NewRepository(repo, opts...)
	if err != nil {
		return nil, fmt.Errorf("%q is not a repository: %w", repo, err)
	}
	tags, err := r.puller.List(ctx, rp)
	if err != nil {
		return nil, fmt.Errorf("list tags of %s: %w", rp.Name(), err)
	}
	return tags, nil
}

// Digest resolves a reference to the digest it names now.
func (r *Reader) Digest(ctx context.Context, ref string) (string, error) {
	n, err := parseReference(ref, r.o.Registry, r.o.Insecure)
	if err != nil {
		return "", err
	}
	if d, ok := n.(name.Digest); ok {
		return d.DigestStr(), nil
	}
	desc, err := r.puller.Head(ctx, n)
	if err == nil && desc.Digest.Hex != "" {
		return desc.Digest.String(), nil
	}
	if err != nil && !HeadUnsupported(err) {
		return "", fmt.Errorf("resolve %s: %w", n.Name(), err)
	}
	full, err := r.puller.Get(ctx, n)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", n.Name(), err)
	}
	return full.Digest.String(), nil
}

// NotFound reports a registry's answer that the repository (or the tag)
// does not exist: 404, or the distribution spec's NAME_UNKNOWN and
// MANIFEST_UNKNOWN codes, which some registries send with other statuses.
func NotFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.NameUnknownErrorCode || d.Code == transport.ManifestUnknownErrorCode {
			return true
		}
	}
	return false
}

// HeadUnsupported reports a registry that refuses HEAD (405 or 501): ask
// it again with GET.
func HeadUnsupported(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && (te.StatusCode == http.StatusMethodNotAllowed || te.StatusCode == http.StatusNotImplemented)
}
