package action

import (
	"context"
	"fmt"
	"sync"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Blocked is a version a package does not move to although its dependents
// admit it: the package manager would install it and leave it unhealthy.
type Blocked struct {
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// settle checks the dependencies of the version each package would move
// to, as the package manager will once it runs there, against where the
// rest move: a dependency that is installed must run, or move to, a
// version the constraint admits; one that is not must have a matching
// version in its registry. When the dependency can stay lower and satisfy
// the constraint, it is held there (the new version's constraint holds it
// as the Lock's do); otherwise the version is blocked and the next lower
// candidate tried. Versions only ever go down, so it ends; it is
// conservative where a lowered dependency was held for a version blocked
// later. Each version's meta object is read once, without the rest of its
// layer (the step's plan reads and verifies the whole package).
func (o *Outdated) settle(ctx context.Context, items []*Item, lock []installed.LockPackage) error {
	byRepo := map[string]*Item{}
	for _, it := range items {
		if _, ok := byRepo[it.repo]; !ok && it.Error == "" {
			byRepo[it.repo] = it
		}
	}
	locked := map[string]string{}
	for _, lp := range lock {
		locked[reference.Repository(lp.Source)] = lp.Version
	}
	metas := &metaCache{o: o, read: map[string]resolve.MetaRead{}}
	// The first round's versions are read in parallel.
	if err := metas.prefetch(ctx, items); err != nil {
		return err
	}
	for changed := true; changed; {
		changed = false
		for _, it := range items {
			if !it.Moves() {
				continue
			}
			m := metas.get(ctx, it)
			if err := ctx.Err(); err != nil {
				return err
			}
			why, held := m.Err, false
			if why == "" {
				why, held = o.unmet(ctx, it, m.Meta, byRepo, locked)
			}
			switch {
			case held:
				changed = true
			case why != "":
				it.Blocked = append(it.Blocked, Blocked{Version: it.wantedTag, Reason: why})
				it.settleAt(it.next)
				changed = true
			}
		}
	}
	return nil
}

// unmet is why the version it moves to cannot run ("" when it can); held
// when, instead, a dependency was held at a lower version that admits it
// (the versions are then settled again).
func (o *Outdated) unmet(ctx context.Context, it *Item, meta *xpkg.Meta, byRepo map[string]*Item, locked map[string]string) (why string, held bool) {
	if meta == nil {
		return "", false
	}
	for _, d := range meta.DependsOn {
		repo := reference.Repository(d.Package)
		dep := byRepo[repo]
		have, inLock := locked[repo]
		switch {
		case dep != nil:
			have = dep.Wanted
		case !inLock:
			ok, err := o.Registry.HasMatch(ctx, pullSecrets(it.pkg), d)
			switch {
			case source.NotFound(err):
				return fmt.Sprintf("needs %s %s, which is not installed and whose repository does not exist (%s)", d.Package, d.Version, exit.Message(err)), false
			case err == nil && !ok:
				return fmt.Sprintf("needs %s %s, which is not installed, and no version of it in its registry matches", d.Package, d.Version), false
			}
			continue // the plan warns when the registry could not be read
		}
		if d.Version == "" {
			continue
		}
		if ok, err := versions.Satisfies(d.Version, have); err != nil || ok {
			continue // a digest or no semantic version: the plan checks it
		}
		switch {
		case dep == nil: // its registry could not be read: it stays
			return fmt.Sprintf("needs %s %s, which runs %s", d.Package, d.Version, have), false
		case dep.holdFor(it, d.Version):
			return "", true
		case dep.Moves():
			return fmt.Sprintf("needs %s %s, but %s moves only to %s", d.Package, d.Version, dep, dep.Wanted), false
		}
		return fmt.Sprintf("needs %s %s, but %s runs %s and cannot move to a version that matches", d.Package, d.Version, dep, dep.Current), false
	}
	return "", false
}

// holdFor lowers the item's Wanted to the newest lower candidate that
// constraint (of the version dependent moves to) admits, or keeps it at
// Current when Current does; false when neither does.
func (it *Item) holdFor(dependent *Item, constraint string) bool {
	for i := it.next; i < len(it.candidates); i++ {
		if ok, err := versions.Satisfies(constraint, it.candidates[i].Name); err == nil && ok {
			it.held(dependent, constraint)
			it.settleAt(i)
			return true
		}
	}
	if ok, err := versions.Satisfies(constraint, it.Current); err == nil && ok && it.Moves() {
		it.held(dependent, constraint)
		it.settleAt(len(it.candidates))
		return true
	}
	return false
}

func (it *Item) held(dependent *Item, constraint string) {
	it.HeldBy = append(it.HeldBy, versions.Hold{By: dependent.String() + " at " + dependent.wantedTag, Constraint: constraint})
}

// metaCache reads each version's meta object once.
type metaCache struct {
	o    *Outdated
	mu   sync.Mutex
	read map[string]resolve.MetaRead
}

func (c *metaCache) prefetch(ctx context.Context, items []*Item) error {
	// One read a version: packages of one repository move to the same.
	var moving []*Item
	seen := map[string]bool{}
	for _, it := range items {
		if ref := it.repo + ":" + it.wantedTag; it.Moves() && !seen[ref] {
			seen[ref] = true
			moving = append(moving, it)
		}
	}
	c.o.bounded(len(moving), func(i int) { c.get(ctx, moving[i]) })
	return ctx.Err()
}

// get reads the meta object of the version it moves to, as the package
// manager reads the package (ImageConfigs, pull secrets), through the
// repository's reader. A version that cannot be read is blocked: the
// package manager could not install it either, and its plan could not
// be made.
func (c *metaCache) get(ctx context.Context, it *Item) resolve.MetaRead {
	ref := it.repo + ":" + it.wantedTag
	c.mu.Lock()
	m, ok := c.read[ref]
	c.mu.Unlock()
	if ok {
		return m
	}
	m = c.o.Registry.ReadMeta(ctx, ref, pullSecrets(it.pkg), resolve.MetaOptions{Limits: c.o.Limits, Reuse: it.reader, Shared: c.o.Shared})
	c.mu.Lock()
	c.read[ref] = m
	c.mu.Unlock()
	return m
}
