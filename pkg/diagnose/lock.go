package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// ResolverName is the name Crossplane's resolver gives the package it
// installs for a dependency on repo (xpkg.ToDNSLabel of the repository
// path, as reference.DefaultName derives it); "" when repo does not parse.
func ResolverName(repo string) string {
	r, err := name.ParseReference(repo, name.WeakValidation)
	if err != nil {
		return ""
	}
	return reference.DefaultName(r)
}

// duplicateNodes: Crossplane's dependency graph (internal/dag, MapDag.Init)
// refuses a second node with the same identifier, a Lock entry's source,
// and while it does no package's dependencies resolve. Two entries come
// from two revisions of one package (Manual activation leaves the one it
// replaced in the Lock: only an Inactive revision removes itself), or from
// two packages of one source (a custom-named package and the twin the
// resolver installed under its own name).
func (s *State) duplicateNodes() []findings.Finding {
	var out []findings.Finding
	for _, src := range s.nodes.Duplicated() {
		out = append(out, s.duplicate(src, slices.Clone(s.nodes.Of(src))))
	}
	return out
}

func (s *State) duplicate(src string, entries []installed.LockPackage) findings.Finding {
	slices.SortFunc(entries, func(a, b installed.LockPackage) int { return strings.Compare(a.Name, b.Name) })
	var owners []*installed.Package
	var parts []string
	for _, lp := range entries {
		p, _ := s.Owner(lp.Name)
		if p != nil && !slices.Contains(owners, p) {
			owners = append(owners, p)
		}
		parts = append(parts, fmt.Sprintf("revision %s of %s (%s)", lp.Name, s.entryOwner(lp), lp.Version))
	}
	head := fmt.Sprintf("the Lock holds %d nodes for %s: %s; Crossplane builds no dependency graph while it does (node %s already exists), so no package's dependencies resolve and every package may turn unhealthy",
		len(entries), src, strings.Join(parts, ", "), src)
	f := findings.Finding{Rule: findings.RuleDuplicateLockNode, Severity: findings.Blocking, Object: "lock/lock", Count: findings.Count(int64(len(entries)))}
	if len(owners) == 1 && len(entries) == s.countOwned(entries, owners[0]) {
		f.Object = owners[0].KindName()
		f.Message = head + ". " + s.keepRevision(owners[0], entries)
		return f
	}
	f.Message = head + ". " + s.keepPackage(src, entries, owners)
	return f
}

// countOwned counts the entries whose revision belongs to p.
func (s *State) countOwned(entries []installed.LockPackage, p *installed.Package) int {
	n := 0
	for _, lp := range entries {
		if o, _ := s.Owner(lp.Name); o == p {
			n++
		}
	}
	return n
}

// keepRevision: of one package's revisions the package manager keeps the
// package's current revision (status.currentRevision) and deactivates or
// collects the others; deleting those is what clears the Lock (an entry
// edited out of the Lock is written back by its revision).
func (s *State) keepRevision(p *installed.Package, entries []installed.LockPackage) string {
	var others []string
	for _, lp := range entries {
		if lp.Name != p.CurrentRevision {
			others = append(others, lp.Name)
		}
	}
	kind := strings.ToLower(p.Kind) + "revision"
	keep := fmt.Sprintf("Crossplane keeps %s, the current revision of %s", p.CurrentRevision, p.KindName())
	if !slices.ContainsFunc(entries, func(lp installed.LockPackage) bool { return lp.Name == p.CurrentRevision }) {
		keep = fmt.Sprintf("none of them is the current revision of %s (%s)", p.KindName(), cmp.Or(p.CurrentRevision, "none yet"))
	}
	return fmt.Sprintf("%s: delete the other (kubectl delete %s %s); editing the Lock does not help, a revision writes its entry back",
		keep, kind, strings.Join(others, " "))
}

// keepPackage: of two packages of one source, the resolver keeps the one
// under the name it gives the dependency, and installs that one again
// whenever no Lock entry has the source (resolver.NewPackage).
func (s *State) keepPackage(src string, entries []installed.LockPackage, owners []*installed.Package) string {
	want := ResolverName(src)
	var names, others []string
	var keep *installed.Package
	for _, p := range owners {
		names = append(names, p.KindName())
		if p.Name == want {
			keep = p
		} else {
			others = append(others, p.KindName())
		}
	}
	if keep == nil {
		return fmt.Sprintf("Crossplane's resolver names this dependency %s, which none of %s is: keep one of them and delete the others (kubectl xpkg describe shows what each revision installed; definitions only a deleted revision owns go with it)",
			cmp.Or(want, "(unknown)"), cmp.Or(strings.Join(names, ", "), "the packages of these revisions"))
	}
	return fmt.Sprintf("Crossplane keeps %s: its resolver installs this dependency under that name, and installs it again whenever the Lock has no entry for %s; delete %s (first check with kubectl xpkg describe which definitions only its revision owns: they go with it)",
		keep.KindName(), src, strings.Join(others, ", "))
}

// StaleNode is a revision that holds a second Lock node for its
// package's source and that the package manager itself would let go.
type StaleNode struct {
	Package  *installed.Package
	Revision *installed.Revision
	Source   string
}

// StaleNodes: of one package's revisions that hold a Lock node each for
// one source, every one but the package's current revision, and only
// while it is not active (an active one that is not current is the
// package manager half-way through an upgrade: it deactivates it itself).
// Deleting it is what clears the Lock: an entry edited out is written
// back by its revision. Two packages of one source are left out: which
// to keep is the user's call.
func (s *State) StaleNodes() []StaleNode {
	var out []StaleNode
	for _, lp := range s.lock {
		p, r := s.Owner(lp.Name)
		entries := s.nodes.Of(lp.Source)
		if len(entries) < 2 || p == nil || r == nil || r.Name == p.CurrentRevision ||
			strings.EqualFold(r.DesiredState, "Active") || s.countOwned(entries, p) != len(entries) ||
			!slices.ContainsFunc(entries, func(e installed.LockPackage) bool { return e.Name == p.CurrentRevision }) {
			continue
		}
		out = append(out, StaleNode{Package: p, Revision: r, Source: lp.Source})
	}
	return out
}

// GoneEntries are the Lock's entries whose revision no longer exists,
// judged only when every revision was read (nothing writes them back),
// and the Lock's UID; none when the Lock was not read.
func (s *State) GoneEntries() ([]installed.LockPackage, string) {
	if !s.revsAll || s.lockObj == nil {
		return nil, ""
	}
	var out []installed.LockPackage
	for _, lp := range s.lock {
		if _, r := s.Owner(lp.Name); r == nil && lp.Name != "" && lp.Source != "" {
			out = append(out, lp)
		}
	}
	return out, string(s.lockObj.GetUID())
}

// LockFindings judge a change made while the Lock is broken. Two nodes
// for one source stop every package's dependency resolution, and no
// change becomes healthy until one goes: blocking (doctor names them).
// Another unresolved Lock is a warning: the change may be what resolves
// it.
func LockFindings(lock []installed.LockPackage, unresolved *installed.Condition) []findings.Finding {
	if dups := installed.NodesBySource(lock).Duplicated(); len(dups) > 0 {
		return []findings.Finding{{Rule: findings.RuleDuplicateLockNode, Severity: findings.Blocking, Object: "lock/lock",
			Message: fmt.Sprintf("the Lock holds two nodes for %s: Crossplane resolves no package's dependencies while it does, so this change cannot become healthy; kubectl xpkg doctor names them, and doctor --fix repairs what it can prove", strings.Join(dups, ", "))}}
	}
	if unresolved == nil {
		return nil
	}
	return []findings.Finding{{Rule: findings.RuleDependencyUnresolved, Severity: findings.Warning, Object: "lock/lock",
		Message: installed.LockWarning(unresolved) + "; the change may not become healthy until it is resolved"}}
}

// twinNames: a package others depend on, installed under a name that is
// not the resolver's for its repository. Whenever the Lock has no entry
// for the repository (while the package's revision changes, say), the
// resolver installs it again under its own name: two nodes for one
// source, and every package unhealthy.
func (s *State) twinNames() []findings.Finding {
	var out []findings.Finding
	for _, p := range s.pkgs {
		repo, want, by, ok := s.twinRisk(p)
		if !ok {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleTwinName, Severity: findings.Warning, Object: p.KindName(),
			Message: fmt.Sprintf("%s installs %s, which %s depend(s) on, under a name other than the one Crossplane's resolver gives it (%s): whenever the Lock has no entry for %s, during an upgrade of %s say, the resolver installs it again as %s/%s and the Lock holds two nodes for it; give it that name, keeping what it installed: kubectl xpkg rename %s",
				p.KindName(), repo, strings.Join(by, ", "), want, repo, p.KindName(), strings.ToLower(p.Kind), want, p.KindName())})
	}
	return out
}

// twinRisk: p's repository, the resolver's name for it and the packages
// that depend on it, when others depend on p, it is installed under
// another name and its twin does not exist yet (the twin that exists is
// duplicate-lock-node's to tell).
func (s *State) twinRisk(p *installed.Package) (repo, want string, by []string, ok bool) {
	repo = reference.Repository(p.Source)
	want = ResolverName(repo)
	deps := installed.Dependents(s.lock, repo)
	if want == "" || p.Name == want || len(deps) == 0 {
		return "", "", nil, false
	}
	if twin := s.pkgByKey[installed.KindName(p.Kind, want)]; twin != nil && installed.SameRepo(twin.Source, repo) {
		return "", "", nil, false
	}
	for _, d := range deps {
		by = append(by, s.entryOwner(d))
	}
	return repo, want, by, true
}

// staleEntries: Lock entries no revision stands behind (deleted, or
// Inactive: an inactive revision removes its entry), and entries or
// dependencies that lack what the resolver needs (a source, a package, a
// type or kind).
func (s *State) staleEntries() []findings.Finding {
	var out []findings.Finding
	for _, lp := range s.lock {
		_, r := s.Owner(lp.Name)
		switch {
		case r == nil && s.revsAll && lp.Name != "":
			out = append(out, s.stale(lp, fmt.Sprintf("its revision %s no longer exists", lp.Name), "remove the entry from the Lock's packages (kubectl edit lock lock): nothing writes it back"))
		case r != nil && strings.EqualFold(r.DesiredState, "Inactive"):
			out = append(out, s.stale(lp, fmt.Sprintf("its revision %s is inactive", lp.Name), "an inactive revision removes its own entry: delete the revision if it stays (kubectl delete "+strings.ToLower(r.Kind)+" "+r.Name+")"))
		}
		if missing := missingFields(lp); len(missing) > 0 {
			out = append(out, s.stale(lp, "it has no "+strings.Join(missing, ", no "), "the resolver cannot install or match what it lacks: uninstall and install the package again, or remove the entry (kubectl edit lock lock)"))
		}
	}
	return out
}

func (s *State) stale(lp installed.LockPackage, why, fix string) findings.Finding {
	return findings.Finding{Rule: findings.RuleStaleLockEntry, Severity: findings.Warning, Object: "lock/lock",
		Message: fmt.Sprintf("the Lock's entry %s (source %s) is stale: %s; %s", cmp.Or(lp.Name, "(no name)"), cmp.Or(lp.Source, "(none)"), why, fix)}
}

// missingFields names what an entry or its dependencies lack.
func missingFields(lp installed.LockPackage) []string {
	var out []string
	if lp.Name == "" {
		out = append(out, "name")
	}
	if lp.Source == "" {
		out = append(out, "source")
	}
	if lp.Type == "" && lp.Kind == "" {
		out = append(out, "type (or kind)")
	}
	for i, d := range lp.Dependencies {
		if d.Package == "" {
			out = append(out, fmt.Sprintf("package in dependency %d", i+1))
		}
		if d.Type == "" && d.Kind == "" {
			out = append(out, fmt.Sprintf("type (or kind) in dependency %d (%s)", i+1, cmp.Or(d.Package, "no package")))
		}
	}
	return out
}

// manualInactive: a package under Manual activation none of whose
// revisions is active runs nothing; the package manager never activates
// one by itself.
func (s *State) manualInactive() []findings.Finding {
	var out []findings.Finding
	for _, p := range s.pkgs {
		if p.ActivationPolicy != "Manual" || !s.revsRead[p.Kind] {
			continue
		}
		revs := s.RevisionsOf(p)
		if slices.ContainsFunc(revs, func(r *installed.Revision) bool { return strings.EqualFold(r.DesiredState, "Active") }) {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleManualInactive, Severity: findings.Warning, Object: p.KindName(),
			Message: fmt.Sprintf("%s activates revisions by hand (revisionActivationPolicy: Manual) and none of its %d revision(s) is active: it runs nothing; kubectl xpkg upgrade %s --activate activates its current revision %s",
				p.KindName(), len(revs), p.KindName(), cmp.Or(p.CurrentRevision, "(none yet)"))})
	}
	return out
}

// historyPiled: the package manager deletes the oldest revision while a
// package has more than revisionHistoryLimit + 1 of them (0 or unset:
// never, manager.Reconcile); more than that means the collection is not
// keeping up.
func (s *State) historyPiled() []findings.Finding {
	var out []findings.Finding
	for _, p := range s.pkgs {
		if p.HistoryLimit == nil || *p.HistoryLimit == 0 || !s.revsRead[p.Kind] {
			continue
		}
		revs := s.RevisionsOf(p)
		keep := int(*p.HistoryLimit) + 1
		if len(revs) <= keep {
			continue
		}
		var old []string
		for _, r := range revs[keep:] {
			if r.Name != p.CurrentRevision {
				old = append(old, r.Name)
			}
		}
		out = append(out, findings.Finding{Rule: findings.RuleRevisionHistory, Severity: findings.Warning, Object: p.KindName(), Count: findings.Count(int64(len(revs))),
			Message: fmt.Sprintf("%s has %d revisions, more than its revisionHistoryLimit of %d keeps (the current one and %d more): the package manager deletes one past the limit each time it reconciles, so they pile up only when that fails; the oldest: %s (kubectl delete %srevision %s)",
				p.KindName(), len(revs), *p.HistoryLimit, *p.HistoryLimit, strings.Join(old, ", "), strings.ToLower(p.Kind), strings.Join(old, " "))})
	}
	return out
}
