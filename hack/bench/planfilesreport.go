package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// registryReads are a run's registry requests by repository.
type registryReads struct {
	pings, other int
	repos        map[string]*repoReads
}

// repoReads are one repository's requests: manifests by reference (GET
// and HEAD alike), blobs by digest, tag lists.
type repoReads struct {
	manifests, blobs map[string]int
	tags             int
}

// readRegistry sorts the registry counter's requests ("METHOD /v2/...").
func readRegistry(reqs []string) registryReads {
	out := registryReads{repos: map[string]*repoReads{}}
	for _, r := range reqs {
		_, path, _ := strings.Cut(r, " ")
		if path == "/v2/" {
			out.pings++
			continue
		}
		rest, ok := strings.CutPrefix(path, "/v2/")
		var repo, kind, ref string
		if ok {
			if i := strings.LastIndex(rest, "/"); i > 0 {
				repo, ref = rest[:i], rest[i+1:]
				if j := strings.LastIndex(repo, "/"); j > 0 {
					repo, kind = repo[:j], repo[j+1:]
				}
			}
		}
		rr := out.repos[repo]
		if rr == nil {
			rr = &repoReads{manifests: map[string]int{}, blobs: map[string]int{}}
		}
		switch {
		case kind == "manifests":
			rr.manifests[ref]++
		case kind == "blobs":
			rr.blobs[ref]++
		case kind == "tags" && ref == "list":
			rr.tags++
		default:
			out.other++
			continue
		}
		out.repos[repo] = rr
	}
	return out
}

// totals are the run's manifest, blob and tag-list requests.
func (g registryReads) totals() (manifests, blobs, tags int) {
	for _, rr := range g.repos {
		manifests += sumOf(rr.manifests)
		blobs += sumOf(rr.blobs)
		tags += rr.tags
	}
	return
}

// most is the most requests for one manifest reference and for one blob
// in any repository, each with where.
func (g registryReads) most() (manifest int, mWhere string, blob int, bWhere string) {
	for _, repo := range slices.Sorted(maps.Keys(g.repos)) {
		rr := g.repos[repo]
		for _, ref := range slices.Sorted(maps.Keys(rr.manifests)) {
			if n := rr.manifests[ref]; n > manifest {
				manifest, mWhere = n, repo+" manifest "+ref
			}
		}
		for _, d := range slices.Sorted(maps.Keys(rr.blobs)) {
			if n := rr.blobs[d]; n > blob {
				blob, bWhere = n, repo+" blob "+d[:min(len(d), 19)]
			}
		}
	}
	return
}

// writePlanFiles writes the benchmark's table and what it shows.
func writePlanFiles(r *report, cfg *config, rows []*planFilesRow) {
	r.printf("Requests from one run of each; time and peak RSS over %d runs.\n\n| | ", cfg.runs)
	for _, w := range rows {
		r.printf("%d: %s (%d upgrades, %d edits) | ", w.size.packages, w.variant.name, w.variant.upgrades, w.variant.edits)
	}
	r.printf("\n|---|%s\n", strings.Repeat("---|", len(rows)))
	cell := func(label string, f func(*planFilesRow) string) {
		r.printf("| %s |", label)
		for _, w := range rows {
			r.printf(" %s |", f(w))
		}
		r.printf("\n")
	}
	keys := map[string]bool{}
	for _, w := range rows {
		for k := range w.reqs {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		cell("API "+k, func(w *planFilesRow) string { return fmt.Sprint(w.reqs[k]) })
	}
	cell("API requests in all", func(w *planFilesRow) string { return fmt.Sprint(sumOf(w.reqs)) })
	cell("of which WATCHes that stream the initial list", func(w *planFilesRow) string { return fmt.Sprint(w.initial) })
	cell("discovery (cached)", func(w *planFilesRow) string { return fmt.Sprint(w.discovery) })
	cell("registry: repositories read", func(w *planFilesRow) string { return fmt.Sprint(len(w.reg.repos)) })
	cell("registry: manifest / blob / tag-list requests", func(w *planFilesRow) string {
		m, b, t := w.reg.totals()
		return fmt.Sprintf("%d / %d / %d", m, b, t)
	})
	cell("registry: /v2/ pings / other", func(w *planFilesRow) string { return fmt.Sprintf("%d / %d", w.reg.pings, w.reg.other) })
	cell("registry: most reads of one manifest reference / one blob", func(w *planFilesRow) string {
		m, _, b, _ := w.reg.most()
		return fmt.Sprintf("%d / %d", m, b)
	})
	cell("findings", func(w *planFilesRow) string { return findingsPhrase(w.findings) })
	cell("wall (median)", func(w *planFilesRow) string { return ms(w.wall) })
	cell("peak RSS", func(w *planFilesRow) string { return rssOf(w.rss, w.floor) })
	r.printf("\n")
	r.para(unchangedSentence(rows))
	r.para(changedSentence(rows))
	r.para(registrySentence(rows))
}

func findingsPhrase(f map[string]int) string {
	if len(f) == 0 {
		return "none"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		out = append(out, fmt.Sprintf("%d %s", f[k], k))
	}
	return strings.Join(out, ", ")
}

// byVariant is the rows of one variant, in size order.
func byVariant(rows []*planFilesRow, name string) []*planFilesRow {
	var out []*planFilesRow
	for _, w := range rows {
		if w.variant.name == name {
			out = append(out, w)
		}
	}
	return out
}

// diffReqs is b's requests less a's, by kind, leaving out kinds equal in
// both.
func diffReqs(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k := range maps.Keys(b) {
		if d := b[k] - a[k]; d != 0 {
			out[k] = d
		}
	}
	for k := range maps.Keys(a) {
		if _, ok := b[k]; !ok {
			out[k] = -a[k]
		}
	}
	return out
}

func reqsPhrase(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(out, ", ")
}

// unchangedSentence compares, kind by kind, the runs whose manifests
// change nothing: the part of the requests that must not grow.
func unchangedSentence(rows []*planFilesRow) string {
	u := byVariant(rows, "unchanged")
	first, last := u[0], u[len(u)-1]
	d := diffReqs(first.reqs, last.reqs)
	if len(d) == 0 {
		return fmt.Sprintf("**With every manifest unchanged, the API requests were the same at %d and %d packages, kind by kind**: %s (%d in all). Goal (no growth per manifest beyond one read of each kind): met.",
			first.size.packages, last.size.packages, reqsPhrase(first.reqs), sumOf(first.reqs))
	}
	return fmt.Sprintf("**With every manifest unchanged, the API requests grew from %d to %d packages**: %s at %d, %s at %d; the difference: %s. Goal (no growth per manifest): not met.",
		first.size.packages, last.size.packages, reqsPhrase(first.reqs), first.size.packages, reqsPhrase(last.reqs), last.size.packages, reqsPhrase(d))
}

// changedSentence says what the edits and the upgrades added to the
// unchanged runs' requests, at each size, and per upgraded package.
func changedSentence(rows []*planFilesRow) string {
	var b strings.Builder
	for _, s := range planFilesSizes {
		var un, ed, up *planFilesRow
		for _, w := range rows {
			if w.size != s {
				continue
			}
			switch w.variant.name {
			case "unchanged":
				un = w
			case "edits":
				ed = w
			default:
				up = w
			}
		}
		if un == nil || ed == nil || up == nil {
			continue
		}
		fmt.Fprintf(&b, "At %d packages, %d edits added %s; %d upgrades added %s", s.packages, s.edits, reqsPhrase(diffReqs(un.reqs, ed.reqs)), s.upgrades, reqsPhrase(diffReqs(ed.reqs, up.reqs)))
		per := map[string]string{}
		for k, n := range diffReqs(ed.reqs, up.reqs) {
			per[k] = fmt.Sprintf("%.1f", float64(n)/float64(s.upgrades))
		}
		if len(per) > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(per)) {
				parts = append(parts, per[k]+" "+k)
			}
			fmt.Fprintf(&b, " (per upgraded package: %s)", strings.Join(parts, ", "))
		}
		b.WriteString(". ")
	}
	b.WriteString("What grows with the changed packages is expected: an upgrade's plan reads the CRDs the running package defines (one GET each, for " +
		fmt.Sprint(planFilesCRDsEach) + " CRDs; a list of every CRD from 17); its revisions and the Lock come from the shared watch.")
	return b.String()
}

// registrySentence says which runs read the registry, and whether any
// manifest reference or blob was read more than once.
func registrySentence(rows []*planFilesRow) string {
	var quiet []string
	var b strings.Builder
	for _, w := range rows {
		m, bl, t := w.reg.totals()
		if m+bl+t+w.reg.pings+w.reg.other == 0 {
			quiet = append(quiet, fmt.Sprintf("%d %s", w.size.packages, w.variant.name))
			continue
		}
		mm, mWhere, mb, bWhere := w.reg.most()
		repos := float64(max(len(w.reg.repos), 1))
		fmt.Fprintf(&b, "At %d packages with %d upgrades: %d repositories read (%d manifest, %d blob, %d tag-list requests, %d /v2/ pings), per repository %.1f manifest and %.1f blob requests and %.1f pings, where its two references (the running v1.%d.0 and the target v1.%d.0) need 2 and 2; the most for one manifest reference %d (%s), for one blob %d (%s). ",
			w.size.packages, w.variant.upgrades, len(w.reg.repos), m, bl, t, w.reg.pings, float64(m)/repos, float64(bl)/repos, float64(w.reg.pings)/repos,
			planFilesFrom, planFilesTo, mm, mWhere, mb, bWhere)
	}
	goal := "met"
	for _, w := range rows {
		if mm, _, mb, _ := w.reg.most(); mm > 1 || mb > 1 {
			goal = "not met: a reference or blob was read more than once in one run"
		}
	}
	return fmt.Sprintf("No registry request when no package reference changes (%s). %sGoal (each registry read once per repository and reference): %s.",
		strings.Join(quiet, ", "), b.String(), goal)
}
