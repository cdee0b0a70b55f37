package action

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/deptree"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// APIGroups are the package API groups of every Crossplane generation,
// newest first.
func APIGroups() []string {
	var out []string
	for _, g := range cluster.Generations {
		out = append(out, g.Group)
	}
	return out
}

// Get reads installed packages, as kubectl get does: every package (of a
// kind, matching a selector) or the ones named.
type Get struct {
	cfg      *Config
	Selector string
	// Wide reads each package's current revision too (Listing.Revisions).
	Wide bool
}

// NewGet reads packages on cfg's cluster.
func NewGet(cfg *Config) *Get { return &Get{cfg: cfg} }

// Listing is what get found.
type Listing struct {
	Packages []*installed.Package
	// Named: the packages were asked for by name (one named prints as
	// the object itself).
	Named int
	// Revisions are the current revisions of Packages.
	Revisions map[*installed.Package]*installed.Revision
	// Missing names the packages asked for that were not found: those
	// found are printed, then it fails the command, as kubectl get does.
	Missing error
}

// Run reads what args ask for: [KIND] [NAME...]. A Lock that is not
// resolved holds back every package: it is said on progress; one that
// cannot be read (RBAC) is no business of get's.
func (g *Get) Run(ctx context.Context, args []string) (*Listing, error) {
	c, err := g.cfg.connect()
	if err != nil {
		return nil, err
	}
	kind := ""
	if len(args) > 0 {
		if k, err := cluster.ResolveKind(c.Dialect(), args[0]); err == nil {
			kind, args = k, args[1:]
		}
	}
	if len(args) > 0 && g.Selector != "" {
		return nil, &exit.UsageError{Err: fmt.Errorf("name cannot be provided when a selector is specified"), Hint: "See 'kubectl xpkg get --help' for usage."}
	}
	l := &Listing{Named: len(args)}
	l.Packages, l.Missing = g.fetch(ctx, c, kind, args)
	if len(l.Packages) == 0 && l.Missing != nil {
		return nil, l.Missing
	}
	if _, unresolved, err := c.LockState(ctx); err == nil && unresolved != nil {
		g.cfg.Events.say("Warning: %s", installed.LockWarning(unresolved))
	}
	// The current revisions, always: a package whose current revision is
	// inactive runs nothing, whatever its conditions say (a paused one
	// keeps those it had), and is never shown healthy.
	// A CRD of a current revision being deleted refuses every object of
	// its kind, whatever the conditions say: never shown healthy either.
	if len(l.Packages) > 0 {
		if l.Revisions, err = c.CurrentRevisions(ctx, l.Packages); err != nil {
			return nil, err
		}
		if err := c.ReadDeletions(ctx, slices.Collect(maps.Values(l.Revisions))...); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// fetch reads the packages asked for; of several names, the error names
// each one not found.
func (g *Get) fetch(ctx context.Context, c *cluster.Cluster, kind string, names []string) ([]*installed.Package, error) {
	if len(names) == 0 {
		return c.List(ctx, kind, g.Selector)
	}
	var out []*installed.Package
	var errs []error
	for _, n := range names {
		var p *installed.Package
		var err error
		if kind != "" {
			p, err = c.Get(ctx, kind, n)
		} else {
			p, err = c.Find(ctx, n)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		return out, exit.Several(errs)
	}
	return out, nil
}

// Describe reads everything describe shows of the package name names
// (NAME or KIND/NAME).
func Describe(ctx context.Context, cfg *Config, name string) (*installed.Description, error) {
	c, err := cfg.connect()
	if err != nil {
		return nil, err
	}
	kind, name, err := c.KindName(ctx, name)
	if err != nil {
		return nil, err
	}
	d, err := c.Describe(ctx, kind, name)
	if err != nil {
		return nil, err
	}
	if err := c.ReadDeletions(ctx, d.Current()); err != nil {
		return nil, err
	}
	terminating(d)
	return d, nil
}

// terminating shows the MRDs whose CRD is being deleted as what they
// are: Terminating, not established, whatever their conditions say (an
// MRD made again over a CRD being deleted reports Established).
func terminating(d *installed.Description) {
	cur := d.Current()
	if cur == nil {
		return
	}
	for i, m := range d.MRDs {
		if del := cur.DeletionOf(m.Name); del != nil {
			d.MRDs[i].State, d.MRDs[i].Established, d.MRDs[i].Deleting = "Terminating", "False", &del.Since
		}
	}
}

// Tree is the dependency tree of the installed packages, from name's
// package ("": from every package nothing depends on). A Lock that is not
// resolved is said on progress.
func Tree(ctx context.Context, cfg *Config, name string) ([]*deptree.Node, error) {
	c, err := cfg.connect()
	if err != nil {
		return nil, err
	}
	lock, unresolved, err := c.LockState(ctx)
	if err != nil {
		return nil, err
	}
	if unresolved != nil {
		cfg.Events.say("Warning: %s", installed.LockWarning(unresolved))
	}
	pkgs, err := c.List(ctx, "", "")
	if err != nil {
		return nil, err
	}
	revs, err := c.CurrentRevisions(ctx, pkgs)
	if err != nil {
		return nil, err
	}
	if err := c.ReadDeletions(ctx, slices.Collect(maps.Values(revs))...); err != nil {
		return nil, err
	}
	return deptree.Build(lock, pkgs, revs, name)
}

// NewOutdated is outdated on cfg's cluster, reading each repository
// through its registry; pre counts pre-releases.
func NewOutdated(ctx context.Context, cfg *Config, pre bool) (*Outdated, error) {
	reg, err := cfg.Registry(ctx)
	if err != nil {
		return nil, err
	}
	return &Outdated{Registry: reg, Pre: pre}, nil
}

// ResolveKind is the package kind a word names (provider, providers,
// Provider...) on cfg's cluster.
func ResolveKind(cfg *Config, word string) (string, error) {
	c, err := cfg.connect()
	if err != nil {
		return "", err
	}
	return cluster.ResolveKind(c.Dialect(), word)
}

// UnreadError is the error of the items whose repositories could not be
// read (exit status 1), each reason once: their rows are printed first,
// marked.
func UnreadError(items []*Item) error {
	var errs []string
	seen := map[string]bool{}
	for _, it := range items {
		if it.Error != "" && !seen[it.Error] {
			seen[it.Error] = true
			errs = append(errs, it.Error)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return exit.WithCode(exit.Unread, fmt.Errorf("%s", strings.Join(errs, "; ")))
}

// Versions lists the tags of a repository, newest first, and marks the
// installed packages that run each.
type Versions struct {
	cfg *Config
	// Constraint keeps only the versions a semver range admits; Pre
	// counts pre-releases.
	Constraint string
	Pre        bool
}

// NewVersions lists versions as cfg says; the cluster is optional.
func NewVersions(cfg *Config) *Versions { return &Versions{cfg: cfg} }

// VersionsReport is one tag of a repository.
type VersionsReport struct {
	Tag       string   `json:"tag"`
	Semver    bool     `json:"semver"`
	Installed []string `json:"installedAs,omitempty"`
}

// Run lists repo's tags, read where the cluster's package manager reads
// (its ImageConfigs) when a cluster can be reached, else as written.
func (v *Versions) Run(ctx context.Context, repo string) ([]VersionsReport, error) {
	so := v.cfg.Source
	c, err := v.cfg.connect()
	if err != nil {
		c = nil // versions works without a cluster
	}
	read, rso := repo, so
	if c != nil {
		reg, err := v.cfg.Registry(ctx)
		if err != nil {
			return nil, err
		}
		if full, err := source.ParseReference(repo, so.Registry); err == nil {
			repo = full.Context().Name()
		}
		if read, rso, err = reg.Locate(ctx, repo, nil); err != nil {
			return nil, err
		}
	}
	names, err := source.ListTags(ctx, read, rso)
	if err != nil {
		return nil, err
	}
	tags := versions.Sort(names)
	if v.Constraint != "" || !v.Pre {
		kept, err := versions.Filter(tags, v.Constraint, v.Pre)
		if err != nil {
			return nil, err
		}
		if v.Constraint == "" { // without a range, tags that are no version stay
			kept = append(kept, slices.DeleteFunc(slices.Clone(tags), func(t versions.Tag) bool { return t.Version != nil })...)
		}
		tags = kept
	}
	return v.mark(ctx, c, repo, tags), nil
}

// mark notes which installed packages run each tag.
func (v *Versions) mark(ctx context.Context, c *cluster.Cluster, repo string, tags []versions.Tag) []VersionsReport {
	installedAs := map[string][]string{}
	if full, err := source.ParseReference(repo, v.cfg.Source.Registry); err == nil {
		if c != nil {
			pkgs, err := c.List(ctx, "", "")
			if err != nil {
				// A mark that could not be checked is said, not left blank.
				v.cfg.Events.say("Warning: the installed packages could not be listed, so none is marked: %s", exit.Message(err))
			}
			for _, p := range pkgs {
				if reference.Repository(p.Source) == full.Context().Name() {
					installedAs[p.Version] = append(installedAs[p.Version], p.KindName())
				}
			}
		}
	}
	out := make([]VersionsReport, 0, len(tags))
	for _, t := range tags {
		out = append(out, VersionsReport{Tag: t.Name, Semver: t.Version != nil, Installed: installedAs[t.Name]})
	}
	return out
}

// PackageNames are the names of the installed packages (and KIND/NAME
// with withKind), after the package kinds with kinds, for completion.
func PackageNames(ctx context.Context, cfg *Config, kinds, withKind bool) ([]string, error) {
	c, err := cfg.connect()
	if err != nil {
		return nil, err
	}
	var out []string
	if kinds {
		for _, k := range c.Dialect().Kinds() {
			out = append(out, strings.ToLower(k))
		}
	}
	pkgs, err := c.List(ctx, "", "")
	if err != nil {
		return out, nil
	}
	for _, p := range pkgs {
		out = append(out, p.Name)
		if withKind {
			out = append(out, p.KindName())
		}
	}
	return out, nil
}

// ReadPackage finds the package name names and reads what planning a
// change of it or comparing it takes (diff --installed).
func (c *Config) ReadPackage(ctx context.Context, name string) (*Installed, error) {
	cl, err := c.connect()
	if err != nil {
		return nil, err
	}
	p, err := cl.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	return c.installed(ctx, p)
}
