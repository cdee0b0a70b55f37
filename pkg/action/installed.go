package action

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// Installed is an installed package with what reading its images takes.
type Installed struct {
	Package *installed.Package
	// Revisions are the package's revisions, newest first.
	Revisions []*installed.Revision
	// Image is the running revision's image, else the current
	// revision's, else the package's reference.
	Image string
	// Registry reads the package's images as the package manager does.
	Registry *resolve.Registry
}

// ReadInstalled finds the package's revisions and its current revision's
// image; reg reads its images.
func ReadInstalled(ctx context.Context, reg *resolve.Registry, p *installed.Package) (*Installed, error) {
	in := &Installed{Package: p, Image: p.Source, Registry: reg}
	revs, err := reg.Cluster.Revisions(ctx, p)
	if err != nil {
		return nil, err
	}
	in.Revisions = revs
	if r := cmp.Or(in.Running(), in.Current()); r != nil && r.Image != "" {
		in.Image = r.Image
	}
	return in, nil
}

// Running is the revision that runs: the active one, or nil. Under Manual
// activation the package manager makes a new, inactive revision current
// (status.currentRevision) while the active one still runs, and a package
// whose first revision was never activated runs nothing.
func (in *Installed) Running() *installed.Revision {
	for _, r := range in.Revisions {
		if r.DesiredState == "Active" {
			return r
		}
	}
	return nil
}

// Locate returns where and how to read a reference of the package (or
// its repository), with its pull secrets and the cluster's ImageConfigs.
func (in *Installed) Locate(ctx context.Context, ref string) (string, source.Options, error) {
	return in.Registry.Locate(ctx, ref, pullSecrets(in.Package))
}

// Current is the package's current revision, or nil.
func (in *Installed) Current() *installed.Revision {
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
	repo := reference.Repository(p.Source)
	switch {
	case strings.HasPrefix(version, "sha256:"):
		return repo + "@" + version, nil
	case version != "" && !versions.IsConstraint(version):
		return repo + ":" + version, nil
	}
	read, so, err := in.Locate(ctx, repo)
	if err != nil {
		return "", err
	}
	names, err := source.ListTags(ctx, read, so)
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
func pullSecrets(p *installed.Package) []string {
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

// Pin pins ref (in the package's repository) by digest, read with the
// package's pull secrets through the cluster's ImageConfigs.
func (in *Installed) Pin(ctx context.Context, ref string) (string, error) {
	return in.Registry.Pin(ctx, ref, pullSecrets(in.Package))
}
