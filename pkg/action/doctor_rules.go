package action

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// The messages Crossplane's package manager writes that doctor reads
// (internal/controller/pkg/revision and .../resolver): a revision that
// cannot resolve its dependencies says errResolveDeps, and when the cause
// is the Lock's graph as a whole, errInitDAG after it.
const (
	errResolveDeps = "cannot resolve package dependencies"
	errInitDAG     = "cannot initialize dependency graph from the packages in the lock"
)

// resolverName is the name Crossplane's resolver gives the package it
// installs for a dependency on repo (xpkg.ToDNSLabel of the repository
// path, as reference.DefaultName derives it); "" when repo does not parse.
func resolverName(repo string) string {
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
func (s *state) duplicateNodes() []Finding {
	bySource := map[string][]installed.LockPackage{}
	var sources []string
	for _, lp := range s.lock {
		if bySource[lp.Source] == nil {
			sources = append(sources, lp.Source)
		}
		bySource[lp.Source] = append(bySource[lp.Source], lp)
	}
	var out []Finding
	for _, src := range sources {
		if entries := bySource[src]; len(entries) > 1 {
			out = append(out, s.duplicate(src, entries))
		}
	}
	return out
}

func (s *state) duplicate(src string, entries []installed.LockPackage) Finding {
	slices.SortFunc(entries, func(a, b installed.LockPackage) int { return strings.Compare(a.Name, b.Name) })
	var owners []*installed.Package
	var parts []string
	for _, lp := range entries {
		p, _ := s.owner(lp.Name)
		if p != nil && !slices.Contains(owners, p) {
			owners = append(owners, p)
		}
		parts = append(parts, fmt.Sprintf("revision %s of %s (%s)", lp.Name, s.entryOwner(lp), lp.Version))
	}
	head := fmt.Sprintf("the Lock holds %d nodes for %s: %s; Crossplane builds no dependency graph while it does (node %s already exists), so no package's dependencies resolve and every package may turn unhealthy",
		len(entries), src, strings.Join(parts, ", "), src)
	f := Finding{Rule: RuleDuplicateLockNode, Severity: Blocking, Object: "lock/lock", Count: count(int64(len(entries)))}
	if len(owners) == 1 && len(entries) == countOwned(s, entries, owners[0]) {
		f.Object = owners[0].KindName()
		f.Message = head + ". " + s.keepRevision(owners[0], entries)
		return f
	}
	f.Message = head + ". " + s.keepPackage(src, entries, owners)
	return f
}

// countOwned counts the entries whose revision belongs to p.
func countOwned(s *state, entries []installed.LockPackage, p *installed.Package) int {
	n := 0
	for _, lp := range entries {
		if o, _ := s.owner(lp.Name); o == p {
			n++
		}
	}
	return n
}

// keepRevision: of one package's revisions the package manager keeps the
// package's current revision (status.currentRevision) and deactivates or
// collects the others; deleting those is what clears the Lock (an entry
// edited out of the Lock is written back by its revision).
func (s *state) keepRevision(p *installed.Package, entries []installed.LockPackage) string {
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
func (s *state) keepPackage(src string, entries []installed.LockPackage, owners []*installed.Package) string {
	want := resolverName(src)
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

// unresolved is the reason chain of an unresolvable dependency: the
// Lock's Resolved=False message (the resolver's), each revision whose
// own dependencies fail (dependency.go: missing or incompatible
// dependencies, a digest that does not match), and for every source those
// messages name, each installed package whose constraint on it takes part
// and what runs it.
func (s *state) unresolved() []Finding {
	var out []Finding
	if c := s.lockCond; c != nil {
		msg := strings.TrimPrefix(c.Message, "Error occurred during dependency resolution ")
		f := Finding{Rule: RuleDependencyUnresolved, Severity: Blocking, Object: "lock/lock",
			Message: fmt.Sprintf("the Lock is not resolved (Resolved=False, %s: %s): Crossplane resolves no package's dependencies until it is%s", c.Reason, msg, s.chain(msg))}
		out = append(out, f)
	}
	for _, r := range s.revs {
		c := r.Condition("RevisionHealthy")
		if c == nil || c.Status != "False" || !strings.Contains(c.Message, errResolveDeps) || strings.Contains(c.Message, errInitDAG) {
			continue // the Lock's own failure is said once, above
		}
		p, _ := s.owner(r.Name)
		if p == nil || p.CurrentRevision != r.Name {
			continue
		}
		out = append(out, Finding{Rule: RuleDependencyUnresolved, Severity: Blocking, Object: p.KindName(),
			Message: fmt.Sprintf("%s (revision %s) cannot resolve its dependencies: %s%s", p.KindName(), r.Name, c.Message, s.chain(c.Message))})
	}
	return out
}

// chain names, for each Lock source msg mentions, the packages whose
// constraints on it take part and what runs it.
func (s *state) chain(msg string) string {
	var links []string
	for _, src := range s.mentioned(msg) {
		var needs []string
		for _, lp := range installed.Dependents(s.lock, src) {
			for _, d := range lp.Dependencies {
				if installed.SameRepo(d.Package, src) {
					needs = append(needs, fmt.Sprintf("%s requires %s", s.entryOwner(lp), cmp.Or(strings.TrimSpace(d.Constraints), "any version")))
				}
			}
		}
		runs := "is not installed"
		if ps := s.packagesOf(src); len(ps) > 0 {
			runs = fmt.Sprintf("has no Lock entry, though %s install(s) it (paused, inactive or without a revision: see package-paused, inactive-revision, package-no-revision)", strings.Join(ps, ", "))
		}
		if lp, ok := s.entryFor(src); ok {
			runs = fmt.Sprintf("runs %s as %s", lp.Version, s.entryOwner(lp))
		}
		link := fmt.Sprintf("%s %s", src, runs)
		if len(needs) > 0 {
			link += "; " + strings.Join(needs, ", ")
		}
		links = append(links, link)
	}
	if len(links) == 0 {
		return ""
	}
	return ". Taking part: " + strings.Join(links, ". ")
}

// packagesOf names the packages of src, as kind/name.
func (s *state) packagesOf(src string) []string {
	var out []string
	for _, p := range s.pkgs {
		if installed.SameRepo(p.Source, src) {
			out = append(out, p.KindName())
		}
	}
	return out
}

// mentioned are the sources of the Lock (entries and dependencies) that
// msg names, in the order it names them.
func (s *state) mentioned(msg string) []string {
	var srcs []string
	add := func(src string) {
		if src != "" && strings.Contains(msg, src) && !slices.Contains(srcs, src) {
			srcs = append(srcs, src)
		}
	}
	for _, lp := range s.lock {
		add(lp.Source)
		for _, d := range lp.Dependencies {
			add(d.Package)
		}
	}
	// A source that is part of another (org/provider in
	// org/provider-family) is not mentioned by the longer one alone.
	at := map[string]int{}
	for _, a := range srcs {
		at[a] = strings.Index(blankLonger(msg, a, srcs), a)
	}
	srcs = slices.DeleteFunc(srcs, func(a string) bool { return at[a] < 0 })
	slices.SortFunc(srcs, func(a, b string) int { return at[a] - at[b] })
	return srcs
}

// blankLonger is msg with every source of srcs that contains a (but is
// not a) blanked out, its length kept.
func blankLonger(msg, a string, srcs []string) string {
	for _, b := range srcs {
		if b != a && strings.Contains(b, a) {
			msg = strings.ReplaceAll(msg, b, strings.Repeat(" ", len(b)))
		}
	}
	return msg
}

// entryFor is the Lock entry for src.
func (s *state) entryFor(src string) (installed.LockPackage, bool) {
	for _, lp := range s.lock {
		if installed.SameRepo(lp.Source, src) {
			return lp, true
		}
	}
	return installed.LockPackage{}, false
}

// twinNames: a package others depend on, installed under a name that is
// not the resolver's for its repository. Whenever the Lock has no entry
// for the repository (while the package's revision changes, say), the
// resolver installs it again under its own name: two nodes for one
// source, and every package unhealthy.
func (s *state) twinNames() []Finding {
	var out []Finding
	for _, p := range s.pkgs {
		repo, want, by, ok := s.twinRisk(p)
		if !ok {
			continue
		}
		out = append(out, Finding{Rule: RuleTwinName, Severity: Warning, Object: p.KindName(),
			Message: fmt.Sprintf("%s installs %s, which %s depend(s) on, under a name other than the one Crossplane's resolver gives it (%s): whenever the Lock has no entry for %s, during an upgrade of %s say, the resolver installs it again as %s/%s and the Lock holds two nodes for it; give it that name, keeping what it installed: kubectl xpkg rename %s",
				p.KindName(), repo, strings.Join(by, ", "), want, repo, p.KindName(), strings.ToLower(p.Kind), want, p.KindName())})
	}
	return out
}

// twinRisk: p's repository, the resolver's name for it and the packages
// that depend on it, when others depend on p, it is installed under
// another name and its twin does not exist yet (the twin that exists is
// duplicate-lock-node's to tell).
func (s *state) twinRisk(p *installed.Package) (repo, want string, by []string, ok bool) {
	repo = reference.Repository(p.Source)
	want = resolverName(repo)
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
func (s *state) staleEntries() []Finding {
	var out []Finding
	for _, lp := range s.lock {
		_, r := s.owner(lp.Name)
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

func (s *state) stale(lp installed.LockPackage, why, fix string) Finding {
	return Finding{Rule: RuleStaleLockEntry, Severity: Warning, Object: "lock/lock",
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
func (s *state) manualInactive() []Finding {
	var out []Finding
	for _, p := range s.pkgs {
		if p.ActivationPolicy != "Manual" || !s.revsRead[p.Kind] {
			continue
		}
		revs := s.revisionsOf(p)
		if slices.ContainsFunc(revs, func(r *installed.Revision) bool { return strings.EqualFold(r.DesiredState, "Active") }) {
			continue
		}
		out = append(out, Finding{Rule: RuleManualInactive, Severity: Warning, Object: p.KindName(),
			Message: fmt.Sprintf("%s activates revisions by hand (revisionActivationPolicy: Manual) and none of its %d revision(s) is active: it runs nothing; kubectl xpkg upgrade %s --activate activates its current revision %s",
				p.KindName(), len(revs), p.KindName(), cmp.Or(p.CurrentRevision, "(none yet)"))})
	}
	return out
}

// historyPiled: the package manager deletes the oldest revision while a
// package has more than revisionHistoryLimit + 1 of them (0 or unset:
// never, manager.Reconcile); more than that means the collection is not
// keeping up.
func (s *state) historyPiled() []Finding {
	var out []Finding
	for _, p := range s.pkgs {
		if p.HistoryLimit == nil || *p.HistoryLimit == 0 || !s.revsRead[p.Kind] {
			continue
		}
		revs := s.revisionsOf(p)
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
		out = append(out, Finding{Rule: RuleRevisionHistory, Severity: Warning, Object: p.KindName(), Count: count(int64(len(revs))),
			Message: fmt.Sprintf("%s has %d revisions, more than its revisionHistoryLimit of %d keeps (the current one and %d more): the package manager deletes one past the limit each time it reconciles, so they pile up only when that fails; the oldest: %s (kubectl delete %srevision %s)",
				p.KindName(), len(revs), *p.HistoryLimit, *p.HistoryLimit, strings.Join(old, ", "), strings.ToLower(p.Kind), strings.Join(old, " "))})
	}
	return out
}
