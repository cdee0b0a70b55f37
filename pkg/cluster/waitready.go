package cluster

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

func everything() labels.Selector { return labels.Everything() }

// WaitReady watches a package until its current conditions say Installed
// and Healthy, and every dependency its revision declares in the Lock is
// installed and healthy too. It prints progress lines to out, stops at once
// on a terminal failure, and returns a WaitTimeoutError when ctx's deadline
// passes first. The package must point at want (the reference the change
// set) all along: once another writer points it elsewhere, its conditions
// tell of that writer's change, not this one, and the wait fails with a
// ChangedError (Waiting).
func (c *Cluster) WaitReady(ctx context.Context, kind, name, want string, d time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	w := c.newWatcher()
	pr := &progress{out: out, start: time.Now()}
	what := installed.KindName(kind, name)
	var pending []string
	seen := w.caughtUp(ctx, kind, name)
	err := w.run(ctx, func() (bool, error) {
		u := w.cached(kind, name)
		if !seen(u) {
			pending = []string{"the watch has not yet delivered " + what + " as it is now"}
			return false, nil
		}
		if u == nil {
			pending = []string{what + " does not exist"}
			return false, fmt.Errorf("%s was deleted while waiting for it", what)
		}
		p := c.dialect.Decode(u)
		if want != "" && p.Source != want {
			return true, &ChangedError{Package: what, Planned: want, Now: p.Source, Waiting: true}
		}
		revs := c.reportRevisions(w, p, pr)
		r := c.dialect.Readiness(p)
		if r.Terminal != nil {
			return true, fmt.Errorf("%s failed: %s", what, installed.DescribeCondition(r.Terminal))
		}
		for _, t := range []string{installed.TypeInstalled, installed.TypeHealthy} {
			if cnd := p.Condition(t); installed.IsCurrent(p, cnd) {
				pr.say("%s: %s", what, installed.DescribeCondition(cnd))
			}
		}
		if err := installed.InactiveByHand(p, revs); err != nil {
			return true, err
		}
		// An unresolved Lock holds back every package's dependencies,
		// whichever package caused it: say so, and give up on it once
		// it is stuck.
		lock := c.lockCondition(w)
		if lock != nil {
			pr.say("%s", installed.LockWarning(lock))
			if !r.Ready && installed.LockStuck(lock) && installed.ReportsLock(p) {
				return true, fmt.Errorf("%s cannot become healthy: %s", what, installed.LockWarning(lock))
			}
		}
		pending = r.Pending
		if r.Ready && !c.revisionSeen(p, revs) {
			// Ready by the package's conditions, but its current revision
			// has not reached the watch yet: wait for it, so that the
			// revision installed is always reported.
			pending = []string{"the watch has not yet delivered revision " + p.CurrentRevision + " of " + what}
			return false, nil
		}
		if r.Ready {
			if p.AwaitsActivation() {
				pr.say("%s", installed.AwaitingActivationNote(what))
			}
			pending = c.dependenciesPending(w, p, pr)
		}
		if lock != nil && len(pending) > 0 {
			pending = append(pending, installed.LockWarning(lock))
		}
		return len(pending) == 0, nil
	})
	return timeout(err, what, d, pending)
}

// revisionSeen says whether p's current revision is among revs (true
// for a kind without revisions, or a package that names none yet).
func (c *Cluster) revisionSeen(p *installed.Package, revs []*installed.Revision) bool {
	if c.dialect.RevisionKind(p.Kind) == "" || p.CurrentRevision == "" {
		return true
	}
	for _, r := range revs {
		if r.Name == p.CurrentRevision {
			return true
		}
	}
	return false
}

// reportRevisions prints the revisions of p as they appear, and returns
// them.
func (c *Cluster) reportRevisions(w *watcher, p *installed.Package, pr *progress) []*installed.Revision {
	rk := c.dialect.RevisionKind(p.Kind)
	if rk == "" {
		return nil
	}
	var revs []*installed.Revision
	for _, u := range w.list(rk) {
		if !c.dialect.IsRevisionOf(p, u) {
			continue
		}
		r := c.dialect.DecodeRevision(u)
		pr.revision(p.KindName(), r)
		revs = append(revs, r)
	}
	return revs
}

// revision reports a revision the first time it is seen (created, if that
// happened during the wait) and again when its desired state changes.
func (pr *progress) revision(who string, r *installed.Revision) {
	if pr.revisions == nil {
		pr.revisions = map[string]string{}
	}
	state := orDash(r.DesiredState)
	prev, seen := pr.revisions[r.Name]
	pr.revisions[r.Name] = state
	switch {
	case !seen && r.Created.Before(pr.start.Truncate(time.Second)):
		pr.say("%s: revision %s (%s) for %s", who, r.Name, state, r.Image)
	case !seen:
		pr.say("%s: revision %s (%s) created for %s", who, r.Name, state, r.Image)
	case prev != state:
		pr.say("%s: revision %s is now %s", who, r.Name, state)
	}
}

// skipsDependencies: the package's revisions skip dependency resolution
// (spec.skipDependencyResolution, which the package manager copies to
// them): the package manager then neither adds them to the Lock nor
// installs their dependencies, so there is nothing to wait for there.
func skipsDependencies(p *installed.Package) bool {
	if p.Object == nil {
		return false
	}
	skip, _, _ := unstructured.NestedBool(p.Object.Object, "spec", "skipDependencyResolution")
	return skip
}

// dependenciesPending lists the dependencies of p's current revision that
// are not yet installed and healthy, printing each one's progress.
func (c *Cluster) dependenciesPending(w *watcher, p *installed.Package, pr *progress) []string {
	if _, _, ok := c.dialect.LockResource(); !ok || skipsDependencies(p) {
		return nil
	}
	lockObj := c.watchedLock(w)
	if lockObj == nil {
		return []string{"the Lock does not list " + p.Name + " yet"}
	}
	lock := c.dialect.DecodeLock(lockObj)
	entry, ok := installed.LockEntry(lock, p)
	if !ok {
		return []string{"the Lock does not list revision " + p.CurrentRevision + " yet"}
	}
	var pending []string
	for _, dep := range entry.Dependencies {
		dp := c.findBySource(w, dep.Package)
		if dp == nil {
			pending = append(pending, "dependency "+dep.Package+" not installed yet")
			continue
		}
		r := c.dialect.Readiness(dp)
		label := fmt.Sprintf("dependency %s (%s)", dp.KindName(), dp.Source)
		if r.Ready {
			pr.say("%s: Installed, Healthy", label)
			continue
		}
		pr.say("%s: installing", label)
		pending = append(pending, label+": "+strings.Join(r.Pending, ", "))
	}
	return pending
}

// watchedLock is the Lock as the watch holds it, nil when the dialect has
// none or it is not there (yet).
func (c *Cluster) watchedLock(w *watcher) *unstructured.Unstructured {
	gvr, name, ok := c.dialect.LockResource()
	if !ok {
		return nil
	}
	lu, err := w.factory.ForResource(gvr).Lister().Get(name)
	if err != nil {
		return nil
	}
	u, _ := lu.(*unstructured.Unstructured)
	return u
}

// lockCondition is the watched Lock's Resolved condition when it is not
// resolved.
func (c *Cluster) lockCondition(w *watcher) *installed.Condition {
	if u := c.watchedLock(w); u != nil {
		return installed.LockUnresolved(u)
	}
	return nil
}

func (c *Cluster) findBySource(w *watcher, repo string) *installed.Package {
	for _, k := range c.dialect.Kinds() {
		for _, u := range w.list(k) {
			p := c.dialect.Decode(u)
			if installed.SameRepo(p.Source, repo) {
				return p
			}
		}
	}
	return nil
}

// WaitDeleted watches until the package and all its revisions are gone.
func (c *Cluster) WaitDeleted(ctx context.Context, p *installed.Package, d time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	w := c.newWatcher()
	what := p.KindName()
	pr := &progress{out: out, start: time.Now()}
	var pending []string
	err := w.run(ctx, func() (bool, error) {
		pending = nil
		if u := w.cached(p.Kind, p.Name); u != nil {
			pending = append(pending, what+" still exists"+heldBy(u))
		} else {
			pr.say("%s: deleted", what)
		}
		if rk := c.dialect.RevisionKind(p.Kind); rk != "" {
			for _, u := range w.list(rk) {
				if c.dialect.IsRevisionOf(p, u) {
					pending = append(pending, "revision "+u.GetName()+" still exists")
				}
			}
		}
		if gvr, name, ok := c.dialect.LockResource(); ok {
			if lu, err := w.factory.ForResource(gvr).Lister().Get(name); err == nil {
				if u, ok := lu.(*unstructured.Unstructured); ok {
					for _, lp := range c.dialect.DecodeLock(u) {
						if installed.SameRepo(lp.Source, p.Source) && !c.othersRevision(w, p, lp.Name) {
							pending = append(pending, "the Lock still lists "+lp.Name)
						}
					}
				}
			}
		}
		return len(pending) == 0, nil
	})
	return timeout(err, "deletion of "+what, d, pending)
}

// othersRevision: the Lock entry's revision is another package's of the
// same source (during a rename), which the deletion leaves.
func (c *Cluster) othersRevision(w *watcher, p *installed.Package, name string) bool {
	rk := c.dialect.RevisionKind(p.Kind)
	if rk == "" {
		return false
	}
	u := w.cached(rk, name)
	return u != nil && !c.dialect.IsRevisionOf(p, u)
}

// heldBy says what keeps an object whose deletion was asked for: its
// finalizers, which the controllers that set them must remove.
func heldBy(u *unstructured.Unstructured) string {
	if u.GetDeletionTimestamp() == nil || len(u.GetFinalizers()) == 0 {
		return ""
	}
	return " (deleted " + u.GetDeletionTimestamp().UTC().Format(time.RFC3339) + ", held by its finalizers " + strings.Join(u.GetFinalizers(), ", ") + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WaitRevision watches until the package has a revision of image, and
// returns it.
func (c *Cluster) WaitRevision(ctx context.Context, p *installed.Package, image string, d time.Duration) (*installed.Revision, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	w := c.newWatcher()
	rk := c.dialect.RevisionKind(p.Kind)
	var found *installed.Revision
	err := w.run(ctx, func() (bool, error) {
		for _, u := range w.list(rk) {
			if r := c.dialect.DecodeRevision(u); c.dialect.IsRevisionOf(p, u) && r.Image == image {
				found = r
				return true, nil
			}
		}
		return false, nil
	})
	what := "a revision of " + image + " for " + p.KindName()
	return found, timeout(err, what, d, []string{"the package manager has not created it"})
}
