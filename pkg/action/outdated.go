package action

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Item is one installed package, what it runs and what it could run.
type Item struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Package is the package's reference (spec.package).
	Package string `json:"package"`
	// Current is the version the active revision runs: its tag, or its
	// digest when it was installed by digest alone.
	Current string `json:"current"`
	// Wanted is the newest version every installed package's dependsOn
	// admits and whose own dependencies can be satisfied (Current when
	// no newer version is).
	Wanted string `json:"wanted"`
	// Latest is the newest stable version in the registry.
	Latest string `json:"latest"`
	// Drifted: the tag the package runs now names other content than its
	// active revision runs.
	Drifted bool `json:"drifted"`
	// Pinned: the reference names a digest, so the tag cannot drift.
	Pinned bool `json:"pinned,omitempty"`
	// Digest is the digest the active revision runs, when a digest at
	// hand (the pin, or TagDigest) is verified against the revision's
	// name (reference.RevisionMadeFrom); TagDigest is what the running tag
	// names now.
	Digest    string `json:"digest,omitempty"`
	TagDigest string `json:"tagDigest,omitempty"`
	// Revision is the active revision.
	Revision string `json:"revision,omitempty"`
	// HeldBy are the dependents' constraints that keep Wanted below a
	// newer version: those of the Lock, and those of the versions the
	// dependents move to.
	HeldBy []versions.Hold `json:"heldBy,omitempty"`
	// Blocked are versions above Wanted that the dependents admit but
	// whose own dependencies cannot be satisfied, newest first.
	Blocked []Blocked `json:"blocked,omitempty"`
	// Error is why the registry could not be read; Wanted and Latest are
	// then empty.
	Error string `json:"error,omitempty"`
	// Family is the provider family of the revision that runs (its label
	// pkg.crossplane.io/provider-family), "" for none.
	Family string `json:"family,omitempty"`

	pkg  *installed.Package
	repo string
	// wantedTag is Wanted as a tag, when it moves the package.
	wantedTag string
	// tags are the repository's tags, newest first; reader read them.
	tags   []versions.Tag
	reader *source.Reader
	// candidates are the versions above Current the Lock's constraints
	// admit, newest first; Wanted is candidates[next-1], or Current.
	candidates []versions.Tag
	next       int
}

// Outdated reports, for each installed package, what it runs against what
// its dependents allow and what its registry has.
type Outdated struct {
	// Registry reads the packages' repositories as the package manager
	// does (ImageConfigs, pull secrets); its Cluster holds the packages.
	Registry *resolve.Registry
	// Pre counts pre-releases for Wanted (a package running a pre-release
	// counts them anyway).
	Pre bool
	// Parallel bounds the registries read at once; 0 means 8.
	Parallel int
	// Limits bound the reads of packages' meta objects (zero: the
	// defaults).
	Limits xpkg.Limits
	// Shared, when set, shares registry reads with the Outdated of other
	// clusters (a fleet): see resolve.SharedReads.
	Shared *resolve.SharedReads

	// findings are the family-skew findings of the last Items.
	findings []findings.Finding
}

// Findings are what the last Items found about provider families
// (rule family-skew).
func (o *Outdated) Findings() []findings.Finding { return o.findings }

// Items reports the packages of kind ("" for all). It lists the packages
// (one LIST per package kind), reads the Lock once, and each distinct
// repository once (its tags, and a HEAD of the tag its packages run), in
// parallel; then the meta object of each version a package would move to,
// to check its dependencies (settle). Every package is decided, whatever
// kind is asked: a package's Wanted depends on where its dependencies
// move. A repository that cannot be read leaves its rows with Error set:
// the others still count.
func (o *Outdated) Items(ctx context.Context, kind string) ([]*Item, []installed.LockPackage, error) {
	// Every kind, also for one: the dependents that hold a package back
	// are named by their installed packages.
	pkgs, err := o.Registry.Cluster.List(ctx, "", "")
	if err != nil {
		return nil, nil, err
	}
	lock, err := o.Registry.Cluster.Lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	all := make([]*Item, 0, len(pkgs))
	for _, p := range pkgs {
		all = append(all, running(p, lock))
	}
	if err := o.families(ctx, pkgs, all); err != nil {
		return nil, nil, err
	}
	if err := o.readRegistries(ctx, all); err != nil {
		return nil, nil, err
	}
	for _, it := range all {
		if it.Error == "" {
			o.decide(it, lock, pkgs)
		}
	}
	if err := o.settle(ctx, all, lock); err != nil {
		return nil, nil, err
	}
	items := make([]*Item, 0, len(all))
	for _, it := range all {
		if kind == "" || it.Kind == kind {
			items = append(items, it)
		}
	}
	return items, lock, nil
}

// families reads the providers' running revisions (one list) for their
// family label, and judges the families. An identity that may not list
// revisions gets no FAMILY, and is told so.
func (o *Outdated) families(ctx context.Context, pkgs []*installed.Package, items []*Item) error {
	o.findings = nil
	var providers []*installed.Package
	for _, p := range pkgs {
		if p.Kind == "Provider" {
			providers = append(providers, p)
		}
	}
	if len(providers) == 0 {
		return nil
	}
	revs, err := o.Registry.Cluster.CurrentRevisions(ctx, providers)
	switch {
	case apierrors.IsForbidden(err):
		o.Registry.Warn("Warning: you may not list provider revisions, so provider families are not shown: " + exit.Message(err))
		return nil
	case err != nil:
		return err
	}
	for _, it := range items {
		it.Family = diagnose.FamilyOf(it.pkg, revs[it.pkg])
	}
	o.findings = diagnose.FamilyFindings(providers, func(p *installed.Package) *installed.Revision { return revs[p] })
	return nil
}

// running fills in what the package runs, from its Lock entry (the active
// revision's name and version), else its status.
func running(p *installed.Package, lock []installed.LockPackage) *Item {
	it := &Item{Name: p.Name, Kind: p.Kind, Package: p.Source, pkg: p, repo: reference.Repository(p.Source),
		Current: p.Version, Revision: p.CurrentRevision}
	if lp, ok := activeEntry(lock, p); ok {
		it.Revision = lp.Name
		// The Lock holds the identifier the package manager resolved:
		// the digest of a pinned reference, else the tag.
		if lp.Version != p.Digest && lp.Version != p.Version {
			it.Current = lp.Version
		}
	}
	// Pinned when what runs is the reference, and a digest pins it.
	it.Pinned = p.Digest != "" && it.Current == p.Version
	if it.Pinned && reference.RevisionMadeFrom(it.Revision, p.Digest, p.Generation) {
		it.Digest = p.Digest
	}
	return it
}

// DriftKnown tells whether Drifted is known: the tag's digest was read
// and the active revision's name carries an identifier to check it against.
func (it *Item) DriftKnown() bool {
	return it.Error == "" && !it.Pinned && it.TagDigest != "" && reference.RevisionID(it.Revision) != ""
}

// activeEntry is the package's Lock entry: the Lock lists active revisions
// only, named after their package.
func activeEntry(lock []installed.LockPackage, p *installed.Package) (installed.LockPackage, bool) {
	repo := reference.Repository(p.Source)
	for _, lp := range lock {
		// The name first: it is cheap, parsing a reference is not.
		if strings.HasPrefix(lp.Name, p.Name+"-") && reference.Repository(lp.Source) == repo {
			return lp, true
		}
	}
	return installed.LockEntry(lock, p)
}

// readRegistries reads each distinct repository once: its tags, and the
// digest of each tag its packages run (not of digests: they cannot
// drift), bounded to Parallel at once. Only an interruption is an error.
func (o *Outdated) readRegistries(ctx context.Context, items []*Item) error {
	byRepo := map[string][]*Item{}
	var repos []string
	for _, it := range items {
		if _, ok := byRepo[it.repo]; !ok {
			repos = append(repos, it.repo)
		}
		byRepo[it.repo] = append(byRepo[it.repo], it)
	}
	reads := make([]resolve.Repository, len(repos))
	// Resolved in order (what each resolution is, is said in order), read
	// in parallel.
	at := make([]*resolve.At, len(repos))
	for i, repo := range repos {
		w, err := o.Registry.Resolve(ctx, repo, repoSecrets(byRepo[repo]), true)
		if err != nil { // a pull secret that cannot be read marks its rows only
			reads[i] = resolve.Repository{Err: err}
			continue
		}
		at[i] = &w
	}
	o.bounded(len(repos), func(i int) {
		switch w, tags := at[i], runningTags(byRepo[repos[i]]); {
		case w == nil:
		case o.Shared != nil && w.Creds != "":
			reads[i] = o.Shared.Repository(ctx, *w, tags)
		default:
			reads[i] = resolve.ReadRepository(ctx, w.Ref, tags, w.Options)
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, repo := range repos {
		r := reads[i]
		for _, it := range byRepo[repo] {
			if r.Err != nil {
				it.Error = r.Err.Error()
				continue
			}
			it.tags, it.reader = r.Tags, r.Reader
			if t, ok := versions.Latest(r.Tags); ok {
				it.Latest = t.Name
			}
			if it.Pinned {
				continue
			}
			it.TagDigest = r.Digests[it.Current]
			if it.DriftKnown() {
				it.Drifted = !reference.RevisionMadeFrom(it.Revision, it.TagDigest, it.pkg.Generation)
				if !it.Drifted {
					it.Digest = it.TagDigest
				}
			}
		}
	}
	return nil
}

// bounded calls fn(0) to fn(n-1), Parallel (default 8) at a time, and
// waits for them.
func (o *Outdated) bounded(n int, fn func(i int)) {
	sem := make(chan struct{}, cmp.Or(o.Parallel, 8))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// repoSecrets are the pull secrets of a repository's packages.
func repoSecrets(items []*Item) []string {
	var secrets []string
	for _, it := range items {
		for _, s := range pullSecrets(it.pkg) {
			if !slices.Contains(secrets, s) {
				secrets = append(secrets, s)
			}
		}
	}
	return secrets
}

// runningTags are the tags a repository's packages run (not digests:
// they cannot drift), each once.
func runningTags(items []*Item) []string {
	var tags []string
	for _, it := range items {
		if !it.Pinned && !strings.HasPrefix(it.Current, "sha256:") && !slices.Contains(tags, it.Current) {
			tags = append(tags, it.Current)
		}
	}
	return tags
}

// decide sets the candidates and Wanted, the newest of them: the versions
// above Current that every dependent's constraint on the package admits
// (resolve.Candidates), pre-releases counting with Pre or when the
// package runs one. settle then checks Wanted's own dependencies.
func (o *Outdated) decide(it *Item, lock []installed.LockPackage, pkgs []*installed.Package) {
	holds := Holds(lock, pkgs, it.repo)
	pre := o.Pre
	if v, err := semver.NewVersion(it.Current); err == nil && v.Prerelease() != "" {
		pre = true
	}
	it.candidates, it.HeldBy = resolve.Candidates(it.tags, it.Current, holds, pre)
	it.settleAt(0)
}

// settleAt makes the i-th candidate Wanted, or Current when there is none.
func (it *Item) settleAt(i int) {
	it.Wanted, it.wantedTag, it.next = it.Current, "", len(it.candidates)
	if i < len(it.candidates) {
		it.Wanted, it.wantedTag, it.next = it.candidates[i].Name, it.candidates[i].Name, i+1
	}
}

// Holds are the constraints the Lock's packages put on repo, naming each
// dependent as kind/name.
func Holds(lock []installed.LockPackage, pkgs []*installed.Package, repo string) []versions.Hold {
	var out []versions.Hold
	for _, d := range installed.Dependents(lock, repo) {
		for _, dep := range d.Dependencies {
			if reference.Repository(dep.Package) == repo && dep.Constraints != "" {
				out = append(out, versions.Hold{By: diagnose.PackageName(pkgs, d.Source), Constraint: dep.Constraints})
			}
		}
	}
	return out
}

// Moves tells whether upgrade --all would move the package.
func (it *Item) Moves() bool { return it.wantedTag != "" && it.Error == "" }

// String names the item as the verbs do.
func (it *Item) String() string { return installed.KindName(it.Kind, it.Name) }
