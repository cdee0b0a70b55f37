package resolve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Registry reads packages on behalf of a cluster, the way its package
// manager reads them: through the ImageConfig that rewrites the reference,
// with the pull secret an ImageConfig supplies and the package's own
// packagePullSecrets (both in Crossplane's namespace), then the user's
// own credentials.
type Registry struct {
	Cluster     *cluster.Cluster
	XPNamespace string
	// Source are the user's options: registry, keychain, retries.
	Source source.Options
	// Configs are the cluster's ImageConfigs (nil: none apply).
	Configs []imageconfig.Config
	// OnResolve hears, once per reference, each resolution an ImageConfig
	// took part in; OnWarn hears what could not be honoured (may be nil).
	OnResolve func(imageconfig.Resolution)
	OnWarn    func(string)

	mu     sync.Mutex
	said   map[string]bool
	chains map[string]authn.Keychain // by the secrets' names, joined
	// broken are the ImageConfigs' pull secrets that could not be read;
	// fellBack the references read without theirs because of it.
	broken   map[string]error
	fellBack map[string]*FellBack
}

// FellBack is a reference read with the user's own credentials because
// the pull secret an ImageConfig gives it could not be read: what was read
// is not necessarily what the package manager can pull.
type FellBack struct {
	Ref         string
	ImageConfig string
	Secret      string
	Err         error
}

// NewRegistry reads the cluster's ImageConfigs once (unless useConfigs is
// false: --no-image-config). An identity that may not list them reads
// packages as written, and warn says so.
func NewRegistry(ctx context.Context, c *cluster.Cluster, xpNamespace string, so source.Options, useConfigs bool, warn func(string)) (*Registry, error) {
	r := &Registry{Cluster: c, XPNamespace: xpNamespace, Source: so, OnWarn: warn}
	if useConfigs && c != nil {
		configs, err := c.ImageConfigs(ctx)
		switch {
		case apierrors.IsForbidden(err):
			r.Warn("Warning: you may not list ImageConfigs, so packages are read as written, not as Crossplane's package manager reads them (pass --no-image-config to say so)")
		case err != nil:
			return nil, err
		}
		r.Configs = configs
	}
	return r, nil
}

// Direct reads as the user would, with no cluster: no ImageConfig, no
// pull secret.
func Direct(so source.Options) *Registry { return &Registry{Source: so} }

// Locate returns where to read ref (a package reference or a
// repository), after the ImageConfigs, and the options to read it with,
// for a package with the given packagePullSecrets. It reads nothing.
func (r *Registry) Locate(ctx context.Context, ref string, pullSecrets []string) (string, source.Options, error) {
	return r.locate(ctx, ref, pullSecrets, true)
}

// LocateQuietly is Locate without telling OnResolve: for reads of a
// repository's versions whose resolution its read told already.
func (r *Registry) LocateQuietly(ctx context.Context, ref string, pullSecrets []string) (string, source.Options, error) {
	return r.locate(ctx, ref, pullSecrets, false)
}

func (r *Registry) locate(ctx context.Context, ref string, pullSecrets []string, tell bool) (string, source.Options, error) {
	at, err := r.Resolve(ctx, ref, pullSecrets, tell)
	return at.Ref, at.Options, err
}

// At is where and how a reference is read: the reference after the
// ImageConfigs, the options, and who reads it (Creds: "user" for the
// user's own credentials, "secret:HASH" for a cluster's pull secret, ""
// for unknown, which shares no read).
type At struct {
	Ref     string
	Options source.Options
	Creds   string
}

// Resolve is Read, saying who reads (see At); tell: OnResolve hears it.
func (r *Registry) Resolve(ctx context.Context, ref string, pullSecrets []string, tell bool) (At, error) {
	res, err := imageconfig.Resolve(r.Configs, ref)
	if err != nil {
		return At{Options: r.Source}, err
	}
	if tell {
		r.tell(res)
	}
	so := r.Source
	if len(pullSecrets) == 0 && res.PullSecret == "" || r.Cluster == nil {
		return At{res.Resolved, so, credsUser}, nil
	}
	kc, err := r.keychain(ctx, pullSecrets, res.PullSecret)
	if err != nil {
		return At{Options: so}, err
	}
	r.noteFallback(res)
	base := so.Keychain
	if base == nil {
		base = authn.DefaultKeychain
	}
	so.Keychain = authn.NewMultiKeychain(kc, base)
	return At{res.Resolved, so, clusterCreds(kc, res.Resolved, so)}, nil
}

// keychain reads the secrets once per set. The package's own secrets
// must be readable, as before; an ImageConfig's secret that cannot be
// read (RBAC) is said, and reading goes on with the user's credentials.
func (r *Registry) keychain(ctx context.Context, pkgSecrets []string, configSecret string) (authn.Keychain, error) {
	key := strings.Join(pkgSecrets, ",") + "|" + configSecret
	r.mu.Lock()
	kc, ok := r.chains[key]
	r.mu.Unlock()
	if ok {
		return kc, nil
	}
	var chains []authn.Keychain
	if len(pkgSecrets) > 0 {
		k, err := r.Cluster.PullSecretKeychain(ctx, r.XPNamespace, pkgSecrets)
		if err != nil {
			return nil, err
		}
		chains = append(chains, k)
	}
	if configSecret != "" && !slices.Contains(pkgSecrets, configSecret) {
		k, err := r.Cluster.PullSecretKeychain(ctx, r.XPNamespace, []string{configSecret})
		if err != nil {
			r.Warn(fmt.Sprintf("Warning: %v; reading with your own registry credentials", err))
			r.mu.Lock()
			if r.broken == nil {
				r.broken = map[string]error{}
			}
			r.broken[configSecret] = err
			r.mu.Unlock()
		} else {
			chains = append(chains, k)
		}
	}
	kc = authn.NewMultiKeychain(chains...)
	r.mu.Lock()
	if r.chains == nil {
		r.chains = map[string]authn.Keychain{}
	}
	r.chains[key] = kc
	r.mu.Unlock()
	return kc, nil
}

// noteFallback records a reference whose ImageConfig pull secret could
// not be read.
func (r *Registry) noteFallback(res imageconfig.Resolution) {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.broken[res.PullSecret]
	if err == nil {
		return
	}
	fb := &FellBack{Ref: res.Resolved, Secret: res.PullSecret, Err: err}
	for _, a := range res.Applied {
		if a.Reason == imageconfig.ReasonPullSecret {
			fb.ImageConfig = a.Name
		}
	}
	if r.fellBack == nil {
		r.fellBack = map[string]*FellBack{}
	}
	r.fellBack[res.Resolved] = fb
}

// FellBackFor says whether the reference Read returned was read with the
// user's own credentials instead of an ImageConfig's pull secret that
// could not be read (nil when not).
func (r *Registry) FellBackFor(read string) *FellBack {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fellBack[read]
}

func (r *Registry) tell(res imageconfig.Resolution) {
	if r.OnResolve == nil || len(res.Applied) == 0 && res.Unverified == "" {
		return
	}
	r.mu.Lock()
	if r.said == nil {
		r.said = map[string]bool{}
	}
	seen := r.said[res.Ref]
	r.said[res.Ref] = true
	r.mu.Unlock()
	if !seen {
		r.OnResolve(res)
	}
}

// Warn says s once to OnWarn.
func (r *Registry) Warn(s string) {
	r.mu.Lock()
	if r.said == nil {
		r.said = map[string]bool{}
	}
	seen := r.said["warn:"+s]
	r.said["warn:"+s] = true
	r.mu.Unlock()
	if !seen && r.OnWarn != nil {
		r.OnWarn(s)
	}
}

// DescribeResolution says in one line how a resolution reads a reference, for
// stderr: "Reading REF through ImageConfig NAME (as RESOLVED)".
func DescribeResolution(res imageconfig.Resolution) string {
	var parts []string
	if n := res.Rewritten(); n != "" {
		parts = append(parts, fmt.Sprintf("through ImageConfig %s (as %s)", n, res.Resolved))
	}
	for _, a := range res.Applied {
		if a.Reason == imageconfig.ReasonPullSecret {
			parts = append(parts, fmt.Sprintf("with the pull secret %s of ImageConfig %s", res.PullSecret, a.Name))
		}
	}
	s := "Reading " + res.Ref + " " + strings.Join(parts, ", ")
	if res.Unverified != "" {
		s = strings.TrimSpace(s) + fmt.Sprintf("; ImageConfig %s has the package manager verify its signature, which this read does not do", res.Unverified)
	}
	return strings.TrimSpace(s)
}

// HasMatch tells whether the repository of a dependency has a version the
// package manager would install (Choose). A digest is taken as there: it
// is checked when it is pulled; a constraint the package manager cannot
// read matches nothing.
func (r *Registry) HasMatch(ctx context.Context, secrets []string, d xpkg.Dependency) (bool, error) {
	switch {
	case IsDigest(d.Version):
		return true, nil
	case !listsTags([]string{d.Version}):
		return false, nil
	}
	read, so, err := r.Locate(ctx, reference.Repository(d.Package), secrets)
	if err != nil {
		return false, err
	}
	names, err := source.ListTags(ctx, read, so)
	if err != nil {
		return false, err
	}
	_, err = Choose(versions.Sort(names), []string{d.Version})
	return err == nil, nil
}

// Pin resolves the tag of a reference to the digest it names now (read
// as the package manager would: through an ImageConfig's rewrite, whose
// mirror serves the same content) and returns repository:tag@digest, which
// the package manager pulls by digest; a reference with a digest already
// is returned as it is.
func (r *Registry) Pin(ctx context.Context, ref string, pullSecrets []string) (string, error) {
	if reference.Digest(ref) != "" {
		return ref, nil
	}
	read, so, err := r.Locate(ctx, ref, pullSecrets)
	if err != nil {
		return "", err
	}
	d, err := source.Digest(ctx, read, so)
	if err != nil {
		return "", fmt.Errorf("pin %s: %w", ref, err)
	}
	return reference.Pin(ref, d), nil
}
