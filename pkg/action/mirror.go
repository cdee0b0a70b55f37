package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Mirror copies packages with their whole dependency closure to another
// registry (To, a prefix such as registry.example.com/crossplane) or to
// an OCI image layout (ToLayout) carried across an air gap, and from
// such a layout (FromLayout) to a registry, as crane copy copies one
// image: whole, byte for byte, each copy verified at its destination by
// digest.
type Mirror struct {
	cfg *Config
	// To is the destination prefix; ToLayout a layout directory.
	To, ToLayout string
	// FromLayout reads the packages of a layout instead of a registry.
	FromLayout string
	// FromCluster mirrors what the cluster's Lock holds.
	FromCluster bool
	// ThroughCluster reads the sources through the cluster's
	// ImageConfigs and pull secrets, as its package manager would (the
	// command line named the cluster); FromCluster implies it.
	ThroughCluster bool
	// PullSecret is named by the ImageConfigs printed, for the copies'
	// registry.
	PullSecret string
	// Jobs bounds the packages copied at once (default 4).
	Jobs int
	// Destination are the options of the copies' registry (its
	// credentials come from the same docker config).
	Destination source.Options
	// OnProgress hears the bytes sent as they go (may be nil).
	OnProgress func(delta int64)
	// OnCopied hears each package verified at its destination, one at a
	// time (may be nil).
	OnCopied func(MirrorCopy)
}

// NewMirror is a mirror with the config's source options for both ends.
func NewMirror(cfg *Config) *Mirror {
	return &Mirror{cfg: cfg, Jobs: 4, Destination: cfg.Source}
}

// LayoutScheme starts MirrorPlan.To when the copies go to an OCI layout.
const LayoutScheme = "oci-layout:"

// MirrorPackage is one package of a mirror's closure: the repository as
// the packages name it, the version the resolver would install and what
// constrains it.
type MirrorPackage struct {
	// Package is the repository, as the references name it.
	Package string `json:"package"`
	// Kind is Provider, Configuration or Function (from the package's
	// meta object; "" when it was not read, e.g. from a layout).
	Kind string `json:"kind,omitempty"`
	// Version is the tag chosen, or the digest a dependency pins.
	Version string `json:"version"`
	// Digest is the image's (the index's, for a multi-platform package).
	Digest string `json:"digest"`
	// Root is set for a package named on the command line (or installed,
	// with --from-cluster).
	Root bool `json:"root,omitempty"`
	// ConstrainedBy are the dependents' constraints on it.
	ConstrainedBy []versions.Hold `json:"constrainedBy,omitempty"`
	// Destination is where it is copied to ("" for a layout).
	Destination string `json:"destination,omitempty"`
	// Platforms are those of its index (after a copy).
	Platforms []string `json:"platforms,omitempty"`
}

// Ref is the package's reference: repository:tag, or @digest when a
// digest pins it.
func (p *MirrorPackage) Ref() string { return resolve.Ref(p.Package, p.Version) }

// MirrorPlan is the closure a mirror copies.
type MirrorPlan struct {
	// To is the destination: a registry prefix, or oci-layout:DIR.
	To       string           `json:"to"`
	Packages []*MirrorPackage `json:"packages"`
}

// Plan resolves the closure of roots (package references with a tag or
// a digest), or reads it from the layout or the cluster, and says where
// each package goes.
func (m *Mirror) Plan(ctx context.Context, roots []string) (*MirrorPlan, error) {
	var pkgs []*MirrorPackage
	var err error
	switch {
	case m.FromLayout != "":
		pkgs, err = layoutPackages(m.FromLayout)
	default:
		pkgs, err = m.resolve(ctx, roots)
	}
	if err != nil {
		return nil, err
	}
	plan := &MirrorPlan{To: m.To, Packages: pkgs}
	if m.ToLayout != "" {
		plan.To = LayoutScheme + m.ToLayout
		return plan, nil
	}
	return plan, assignDestinations(pkgs, m.To)
}

// resolve reads the roots (the command line's or the Lock's) and
// resolves their closure as the package manager installs it, every
// dependent's constraint counting (resolve.Closure.Set).
func (m *Mirror) resolve(ctx context.Context, args []string) ([]*MirrorPackage, error) {
	reg, err := m.registry(ctx)
	if err != nil {
		return nil, err
	}
	r := resolve.NewClosure(ctx, reg, nil, m.cfg.Limits)
	var roots []resolve.Root
	if m.FromCluster {
		roots, err = m.lockRoots(ctx, r)
	} else {
		roots, err = m.argRoots(args, r)
	}
	if err != nil {
		return nil, err
	}
	for _, root := range roots {
		// Say, once per repository, when an ImageConfig reads it elsewhere.
		if _, _, err := reg.Locate(ctx, root.Repo, nil); err != nil {
			return nil, err
		}
	}
	members, err := r.Set(roots)
	if err != nil {
		return nil, err
	}
	pkgs := make([]*MirrorPackage, len(members))
	for i, mb := range members {
		pkgs[i] = &MirrorPackage{Package: mb.Repo, Kind: mb.Kind, Version: mb.Version, Digest: mb.Digest, Root: mb.Root, ConstrainedBy: mb.ConstrainedBy}
	}
	return pkgs, nil
}

// registry reads as the cluster's package manager does (its
// ImageConfigs and pull secrets) when the cluster is in play; otherwise
// as the user.
func (m *Mirror) registry(ctx context.Context) (*resolve.Registry, error) {
	if m.FromCluster || m.ThroughCluster {
		return m.cfg.Registry(ctx)
	}
	return resolve.Direct(m.cfg.Source), nil
}

// argRoots are the references on the command line: each names its
// version, a tag or a digest (both: the digest pins what the tag names).
func (m *Mirror) argRoots(args []string, r *resolve.Closure) ([]resolve.Root, error) {
	var roots []resolve.Root
	for _, a := range args {
		ref, err := source.ParseReference(a, m.cfg.Source.Registry)
		if err != nil {
			return nil, err
		}
		repo, tag, digest := ref.Context().Name(), reference.Tag(a), reference.Digest(a)
		switch {
		case tag != "" && digest != "":
			r.KnowDigest(resolve.Ref(repo, tag), digest)
			roots = append(roots, resolve.Root{Repo: repo, Version: tag})
		case tag != "":
			roots = append(roots, resolve.Root{Repo: repo, Version: tag})
		case digest != "":
			roots = append(roots, resolve.Root{Repo: repo, Version: digest})
		default:
			return nil, fmt.Errorf("%s names no version: give the tag (%s:v1.2.3) or the digest the mirror should copy", a, a)
		}
	}
	return roots, nil
}

// lockRoots are the packages the cluster's Lock holds, at the versions
// that run; their dependencies are the Lock's, not read again.
func (m *Mirror) lockRoots(ctx context.Context, r *resolve.Closure) ([]resolve.Root, error) {
	c, err := m.cfg.connect()
	if err != nil {
		return nil, err
	}
	lock, err := c.Lock(ctx)
	if err != nil {
		return nil, err
	}
	if len(lock) == 0 {
		return nil, errors.New("the cluster's Lock holds no package: nothing is installed to mirror")
	}
	roots := make([]resolve.Root, 0, len(lock))
	for _, lp := range lock {
		root := resolve.Root{Repo: reference.Repository(lp.Source), Version: lp.Version}
		k := resolve.Known{Kind: cmp.Or(lp.Kind, lp.Type)}
		for _, d := range lp.Dependencies {
			k.Deps = append(k.Deps, xpkg.Dependency{Package: d.Package, Version: d.Constraints})
		}
		r.Know(resolve.Ref(root.Repo, root.Version), k)
		roots = append(roots, root)
	}
	return roots, nil
}

// layoutPackages are the packages a layout holds, by the references its
// index names them with.
func layoutPackages(dir string) ([]*MirrorPackage, error) {
	entries, err := ocicopy.ReadLayout(dir)
	if err != nil {
		return nil, err
	}
	var pkgs []*MirrorPackage
	for _, e := range entries {
		if e.RefName == "" {
			continue
		}
		pkgs = append(pkgs, &MirrorPackage{Package: reference.Repository(e.RefName), Version: reference.Version(e.RefName), Digest: e.Digest.String(), Root: true})
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("the OCI layout %s names no package (no index entry has an org.opencontainers.image.ref.name): write it with kubectl xpkg mirror --to-layout", dir)
	}
	return pkgs, nil
}

// ImageConfigs send the package manager to the plan's copies.
func (m *Mirror) ImageConfigs(plan *MirrorPlan) []map[string]any {
	if m.ToLayout != "" {
		return nil
	}
	return MirrorImageConfigs(plan.Packages, m.To, m.PullSecret)
}
