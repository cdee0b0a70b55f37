// Package source opens Crossplane packages wherever they come from: a
// registry reference, an image tarball (.xpkg, docker save), an OCI image
// layout directory, or a package source directory. It applies the xpkg OCI
// rules (image index, base layer, flattened filesystem), reads layers
// safely within limits, and hands the package.yaml stream (or a legacy
// .registry/ tree) to the format package as an io.Reader or fs.FS.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Source types, as Info.Type reports them.
const (
	TypeRegistry  = "registry"
	TypeTarball   = "tarball"
	TypeLayout    = "oci-layout"
	TypeDirectory = "directory"
)

// Formats, as Info.Format reports them.
const (
	FormatStream = "package.yaml"
	FormatLegacy = "legacy .registry/"
)

// Options configure how packages are found and read.
type Options struct {
	// Registry resolves references without a registry host; empty means
	// $XPKG_REGISTRY, else DefaultRegistry.
	Registry string
	// Platform selects the image of a multi-platform index; nil means linux/amd64.
	Platform *v1.Platform
	// Insecure allows plain HTTP and unverified TLS for registries that are
	// not on loopback (loopback registries may always use plain HTTP).
	Insecure bool
	// Keychain supplies registry credentials; nil means authn.DefaultKeychain
	// (docker config.json and credential helpers).
	Keychain authn.Keychain
	// Transport carries registry requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// MaxUncompressed bounds the decompressed bytes read; 0 means
	// DefaultMaxUncompressed.
	MaxUncompressed int64
	// UserAgent is sent to registries.
	UserAgent string
	// Progress, when set, receives a progress line for large downloads
	// (pass a terminal's stderr).
	Progress io.Writer
	// Inspect reads the image config too (its entrypoint), for inspect.
	Inspect bool
	// VerifyFirst checks every blob the package content comes from
	// before any of it is handed out, for output that cannot be taken
	// back (a pipe into kubectl apply). A registry's or an OCI layout's
	// layer is read once: its blob hashed as it is decompressed and its
	// tar checked, package.yaml spooled to an unlinked temporary file and
	// handed out once the whole layer checks out (a corrupt blob is
	// reported as such, not as the broken tar it makes); an image
	// tarball's layer is read and verified once, then read again.
	// Otherwise content is verified as it is read, and Package.Close
	// reports a mismatch at the end.
	VerifyFirst bool
	// MaxManifestBytes bounds each manifest or index read from a registry:
	// an answer that says it is larger fails at once, one that goes on past
	// it fails as it is read. 0 leaves go-containerregistry's own bound
	// (100 MiB).
	MaxManifestBytes int64
	// Reuse is a Reader whose connections and registry tokens a registry
	// read reuses (the one that read the repository's tags): no second
	// ping and token exchange. Its own credentials and transport apply.
	Reuse *Reader
	// Retry bounds the retries of transient registry faults: the zero
	// Retry means DefaultRetry; otherwise a zero MaxTime, Stall or
	// MinRate takes the default's, and Attempts 0 means no retries.
	Retry Retry
}

func (o Options) withDefaults() Options {
	if o.Registry == "" {
		o.Registry = DefaultRegistryFromEnv()
	}
	if o.Platform == nil {
		p := DefaultPlatform
		o.Platform = &p
	}
	if o.Keychain == nil {
		o.Keychain = authn.DefaultKeychain
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	if o.MaxUncompressed <= 0 {
		o.MaxUncompressed = DefaultMaxUncompressed
	}
	if o.Retry == (Retry{}) {
		o.Retry = DefaultRetry
	}
	if o.Retry.MaxTime <= 0 {
		o.Retry.MaxTime = DefaultRetry.MaxTime
	}
	if o.Retry.Stall <= 0 {
		o.Retry.Stall = DefaultRetry.Stall
	}
	if o.Retry.MinRate <= 0 {
		o.Retry.MinRate = DefaultRetry.MinRate
	}
	return o
}

// Info says what was opened and which rules decided it.
type Info struct {
	// Source is the argument as given.
	Source string `json:"source"`
	// Type is registry, tarball, oci-layout or directory.
	Type string `json:"type"`
	// Reference is the resolved, fully qualified registry reference.
	Reference string `json:"reference,omitempty"`
	// Digest is the digest of the image (manifest) read.
	Digest string `json:"digest,omitempty"`
	// Layer is the digest of the base layer read, if one was.
	Layer string `json:"layer,omitempty"`
	// Rule says how the package content was found.
	Rule string `json:"rule"`
	// Format is package.yaml or legacy .registry/.
	Format string `json:"format"`
	// Notes record the other rules met (index selection and the like).
	Notes []string `json:"notes,omitempty"`
	// Image describes the image the package came from (nil for a
	// package directory).
	Image *ImageInfo `json:"image,omitempty"`
}

// Describe is the one line that says what was read: the resolved
// reference and the rule that found the content.
func (i Info) Describe() string {
	what := i.Source
	if i.Reference != "" {
		what = i.Reference
	}
	if i.Digest != "" && !strings.HasSuffix(what, "@"+i.Digest) {
		what += "@" + i.Digest
	}
	line := fmt.Sprintf("Reading %s %s (%s", i.Type, what, i.Rule)
	for _, n := range i.Notes {
		line += "; " + n
	}
	if i.Format == FormatLegacy {
		line += "; legacy .registry/ package"
	}
	return line + ")"
}

// ImageInfo is what an image's manifests and config say, without its
// content.
type ImageInfo struct {
	// Index is the digest of the image index the image was chosen from,
	// and Platforms the platforms it lists.
	Index     string   `json:"index,omitempty"`
	Platforms []string `json:"platforms,omitempty"`
	// Manifest, MediaType and Config describe the image read.
	Manifest  string `json:"manifest"`
	MediaType string `json:"mediaType,omitempty"`
	Config    string `json:"config,omitempty"`
	// Layers is how many layers the image has; Base the one read.
	Layers int        `json:"layers"`
	Base   *LayerInfo `json:"base,omitempty"`
	// Entrypoint and Cmd are the image config's: a package with an
	// embedded runtime (its controller in the package image) has them.
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
}

// LayerInfo is the base layer: its digests and sizes. Uncompressed is
// counted while the layer is read, and known once the package is closed.
type LayerInfo struct {
	Digest       string `json:"digest"`
	DiffID       string `json:"diffID,omitempty"`
	Size         int64  `json:"size"`
	Uncompressed int64  `json:"uncompressedSize"`
}

// Package is an opened package. Read its Stream (or Legacy tree), then Close
// it: Close finishes checking the layer (later tar entries, the digest), so
// a package is good only if Close returns nil.
type Package struct {
	Info
	stream io.Reader
	legacy fs.FS
	finish func() error
	close  func() error
	closed bool
	err    error
}

// Stream is the package.yaml stream; nil for a legacy package.
func (p *Package) Stream() io.Reader { return p.stream }

// Legacy is the image filesystem holding the .registry/ tree of a legacy
// package; nil for a package.yaml package.
func (p *Package) Legacy() fs.FS { return p.legacy }

// Cause explains a failure to read the package's content: it closes the
// package, which reads and verifies what is left, and when that fails too
// (a layer that does not match its digest, a truncated or broken tar) its
// error is the real cause of the broken stream, and is returned instead.
func (p *Package) Cause(err error) error {
	if err == nil {
		return nil
	}
	if cerr := p.Close(); cerr != nil {
		return cerr
	}
	return err
}

// Close finishes reading and verifying the package and releases it.
func (p *Package) Close() error {
	if p.closed {
		return p.err
	}
	p.closed = true
	if p.finish != nil {
		p.err = p.finish()
	}
	if p.close != nil {
		p.err = errors.Join(p.err, p.close())
	}
	return p.err
}

// Release lets go of a package read only in part (its meta object, say)
// without reading and checking the rest: what was read is unverified, for
// decisions that a full read confirms before anything acts on them.
func (p *Package) Release() error {
	p.finish = nil
	return p.Close()
}

// Open finds the package arg names: an existing file is an image tarball,
// an existing directory an OCI layout or a package directory, anything else
// a registry reference.
func Open(ctx context.Context, arg string, o Options) (*Package, error) {
	o = o.withDefaults()
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		return openDirectory(arg, o)
	case err == nil:
		return openTarball(arg, o)
	case looksLikePath(arg):
		return nil, fmt.Errorf("package %s: %w", arg, err)
	}
	return openRemote(ctx, arg, o)
}

// looksLikePath keeps a mistyped file name from being sent to a registry.
func looksLikePath(arg string) bool {
	return strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, "../") ||
		strings.HasSuffix(arg, ".xpkg") || strings.HasSuffix(arg, ".tar") || strings.HasSuffix(arg, ".tar.gz")
}
