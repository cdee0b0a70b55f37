package plugin

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

// installed is an installed package with what reading its images takes.
type installed struct {
	pkg *cluster.Package
	// image is the current revision's image (the package's reference
	// when no revision is current yet).
	image string
	// options read the package's images, with its pull secrets.
	options source.Options
}

// readInstalled finds the package, its current revision's image, and the
// credentials of its pull secrets.
func readInstalled(ctx context.Context, c *cluster.Cluster, p *cluster.Package, so source.Options, xpNamespace string) (*installed, error) {
	in := &installed{pkg: p, image: p.Source, options: so}
	if p.ResolvedPackage != "" {
		in.image = p.ResolvedPackage
	}
	if p.CurrentRevision != "" {
		revs, err := c.Revisions(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, r := range revs {
			if r.Name == p.CurrentRevision && r.Image != "" {
				in.image = r.Image
			}
		}
	}
	if secrets := pullSecrets(p); len(secrets) > 0 {
		kc, err := c.PullSecretKeychain(ctx, xpNamespace, secrets)
		if err != nil {
			return nil, err
		}
		in.options.Keychain = authn.NewMultiKeychain(kc, authn.DefaultKeychain)
	}
	return in, nil
}

// target turns VERSION into a reference in the package's repository: a
// digest, a tag, a semver constraint (the newest matching tag), or, when
// empty, the newest stable tag above the current version.
func (in *installed) target(ctx context.Context, version string, pre bool) (string, error) {
	p := in.pkg
	repo := cluster.RefRepository(p.Source)
	switch {
	case strings.HasPrefix(version, "sha256:"):
		return repo + "@" + version, nil
	case version != "" && !versions.IsConstraint(version):
		return repo + ":" + version, nil
	}
	names, err := source.ListTags(ctx, repo, in.options)
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
