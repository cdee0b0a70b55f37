package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// Installed is an installed package with what reading its images takes.
type Installed struct {
	Package *cluster.Package
	// Revisions are the package's revisions, newest first.
	Revisions []*cluster.Revision
	// Image is the current revision's image (the package's reference
	// when no revision is current yet).
	Image string
	// Options read the package's images, with its pull secrets.
	Options source.Options
}

// ReadInstalled finds the package's revisions, its current revision's
// image, and the credentials of its pull secrets (in xpNamespace).
func ReadInstalled(ctx context.Context, c *cluster.Cluster, p *cluster.Package, so source.Options, xpNamespace string) (*Installed, error) {
	in := &Installed{Package: p, Image: p.Source, Options: so}
	if p.ResolvedPackage != "" {
		in.Image = p.ResolvedPackage
	}
	revs, err := c.Revisions(ctx, p)
	if err != nil {
		return nil, err
	}
	in.Revisions = revs
	if r := in.Current(); r != nil && r.Image != "" {
		in.Image = r.Image
	}
	if secrets := pullSecrets(p); len(secrets) > 0 {
		kc, err := c.PullSecretKeychain(ctx, xpNamespace, secrets)
		if err != nil {
			return nil, err
		}
		in.Options.Keychain = authn.NewMultiKeychain(kc, authn.DefaultKeychain)
	}
	return in, nil
}

// Current is the package's current revision, or nil.
func (in *Installed) Current() *cluster.Revision {
	for _, r := range in.Revisions {
		if r.Name == in.Package.CurrentRevision {
			return r
		}
	}
	return nil
}

// Target turns VERSION into a reference in the package's repository: a
// digest, a tag, a semver constraint (the newest matching tag), or, when
// empty, the newest stable tag above the current version.
func (in *Installed) Target(ctx context.Context, version string, pre bool) (string, error) {
	p := in.Package
	repo := cluster.RefRepository(p.Source)
	switch {
	case strings.HasPrefix(version, "sha256:"):
		return repo + "@" + version, nil
	case version != "" && !versions.IsConstraint(version):
		return repo + ":" + version, nil
	}
	names, err := source.ListTags(ctx, repo, in.Options)
	if err != nil {
		return "", err
	}
	tags := versions.Sort(names)
	if version == "" {
		t, ok := versions.Newer(tags, p.Version, pre)
		if !ok {
			return "", fmt.Errorf("no version of %s is newer than %s (pass --pre to consider pre-releases, or name a VERSION)", repo, p.Version)
		}
		return repo + ":" + t.Name, nil
	}
	matches, err := versions.Filter(tags, version, pre)
	if err != nil {
		return "", err
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("no tag of %s matches %q", repo, version)
	}
	return repo + ":" + matches[0].Name, nil
}

// pullSecrets are the package's spec.packagePullSecrets names.
func pullSecrets(p *cluster.Package) []string {
	refs, _, _ := unstructured.NestedSlice(p.Object.Object, "spec", "packagePullSecrets")
	var out []string
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// Pin resolves the tag of a reference to the digest it names now and
// returns repository:tag@digest, which the package manager pulls by
// digest; a reference with a digest already is returned as it is.
func Pin(ctx context.Context, ref string, so source.Options) (string, error) {
	if cluster.RefDigest(ref) != "" {
		return ref, nil
	}
	d, err := source.Digest(ctx, ref, so)
	if err != nil {
		return "", fmt.Errorf("pin %s: %w", ref, err)
	}
	return cluster.Pin(ref, d), nil
}
