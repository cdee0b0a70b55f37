package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// rssFlat is how much the peak RSS may grow with ten times the
// Compositions, as a fraction, and still be flat; rssFlatMRDs the same
// with ten times the MRDs, of which the plan keeps each one's name, kind
// and state (a few hundred bytes each: 2,000 MRDs are under 1 MiB).
const (
	rssFlat     = 0.10
	rssFlatMRDs = 0.25
)

// writeActivation writes the activation benchmark's tables and what they
// show.
func writeActivation(r *report, cfg *config, rows []*actRow) {
	r.printf("%d runs of the plan at each size, taking turns with the raw read; requests from one more run, through the proxy. "+
		"CRDs: every CRD in the cluster, the active MRDs' and Crossplane's own.\n\n", cfg.runs)
	r.printf("| MRDs | active | CRDs | Compositions | requests | counting a paged LIST once | of which LIST an active MRD's kind | plan (median; min–max) | raw read of every MRD (median) | plan / raw read | peak RSS |\n")
	r.printf("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range rows {
		med, lo, hi := spreadOf(w.walls)
		raw := medianDuration(w.rawWalls)
		r.printf("| %d | %d | %d | %d | %d | %d | %d | %s; %s–%s | %s | %s | %s |\n",
			w.size.mrds, w.size.active(), w.crdsInAll, w.size.compositions, sumOf(w.reqs), sumOf(w.lists()), w.reqs[perKind],
			ms(med), ms(lo), ms(hi), ms(raw), ratio(med, raw), rssOf(w.rss, w.floor))
	}
	r.printf("\n")
	writeActivationRequests(r, rows)
	r.para(actRequestSentence(rows))
	r.para(actMemorySentence(rows))
	r.para(actTimeSentence(rows))
}

// writeActivationRequests tabulates the requests of each size by verb
// and resource, the LISTs of the MRDs' kinds as one line.
func writeActivationRequests(r *report, rows []*actRow) {
	r.printf("Requests of one run by verb and resource, at each size (MRDs / active / Compositions):\n\n| request |")
	for _, w := range rows {
		r.printf(" %d / %d / %d |", w.size.mrds, w.size.active(), w.size.compositions)
	}
	r.printf("\n|---|%s\n", strings.Repeat("---|", len(rows)))
	keys := map[string]bool{}
	for _, w := range rows {
		for k := range w.reqs {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		r.printf("| %s |", k)
		for _, w := range rows {
			switch {
			case k == perKind:
				r.printf(" %d (%d kinds, limit=1) |", w.reqs[k], len(w.kinds))
			case w.conts[k] > 0:
				r.printf(" %d (%d paged LIST, limit %s) |", w.reqs[k], w.reqs[k]-w.conts[k], w.limits[k])
			default:
				r.printf(" %d |", w.reqs[k])
			}
		}
		r.printf("\n")
	}
	r.printf("| discovery (cached) |")
	for _, w := range rows {
		r.printf(" %d |", w.discovery)
	}
	r.printf("\n\n")
}

// actRequestSentence says whether the requests were a fixed number per
// kind of object plus one LIST per active MRD, and whether more
// Compositions changed them.
func actRequestSentence(rows []*actRow) string {
	var b strings.Builder
	met := true
	fixed := func(w *actRow) map[string]int {
		out := map[string]int{}
		for k, v := range w.lists() {
			if k != perKind {
				out[k] = v
			}
		}
		return out
	}
	same := true
	for _, w := range rows[1:] {
		same = same && maps.Equal(fixed(w), fixed(rows[0]))
	}
	if same {
		fmt.Fprintf(&b, "**Besides the kinds of the active MRDs, the same %d requests at every size counting a paged LIST once** (%s).", sumOf(fixed(rows[0])), listPhrase(fixed(rows[0])))
	} else {
		met = false
		var n []string
		for _, w := range rows {
			n = append(n, fmt.Sprintf("%d (%s)", sumOf(fixed(w)), listPhrase(fixed(w))))
		}
		fmt.Fprintf(&b, "**Besides the kinds of the active MRDs, the requests counting a paged LIST once changed from size to size**: %s.", strings.Join(n, "; "))
	}
	var pages []string
	for _, w := range rows {
		pages = append(pages, fmt.Sprint(sumOf(w.fixed())))
	}
	fmt.Fprintf(&b, " Counting every page: %s, the lists of MRDs and CRDs taking a page per 500.", strings.Join(pages, ", "))
	perMRD := true
	for _, w := range rows {
		once := len(w.kinds) == w.reqs[perKind] && w.wide == 0
		perMRD = perMRD && once && w.reqs[perKind] == w.size.active()
		fmt.Fprintf(&b, " At %s: %d LISTs of the MRDs' kinds, %d kinds", w.size, w.reqs[perKind], len(w.kinds))
		if w.wide > 0 {
			fmt.Fprintf(&b, ", %d of them without limit=1", w.wide)
		}
		b.WriteString(".")
	}
	met = met && perMRD
	for i := 1; i < len(rows); i++ {
		a, c := rows[i-1], rows[i]
		if a.size.mrds != c.size.mrds || a.size.compositions == c.size.compositions {
			continue
		}
		if maps.Equal(a.reqs, c.reqs) {
			fmt.Fprintf(&b, " From %d to %d Compositions: the same %d requests, kind for kind.", a.size.compositions, c.size.compositions, sumOf(c.reqs))
		} else {
			met = false
			fmt.Fprintf(&b, " From %d to %d Compositions the requests changed: %d → %d.", a.size.compositions, c.size.compositions, sumOf(a.reqs), sumOf(c.reqs))
		}
	}
	goal := "met"
	if !met {
		goal = "not met"
	}
	fmt.Fprintf(&b, " Goal (a fixed number per kind of object plus one LIST per active MRD, none more with more Compositions): %s.", goal)
	return b.String()
}

// listPhrase names the requests by kind.
func listPhrase(m map[string]int) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(out, ", ")
}

// actMemorySentence says how the peak RSS moved from size to size.
func actMemorySentence(rows []*actRow) string {
	var b strings.Builder
	flat := true
	b.WriteString("Peak RSS:")
	for i := 1; i < len(rows); i++ {
		a, c := rows[i-1], rows[i]
		grew := float64(c.rss)/float64(a.rss) - 1
		what, limit := fmt.Sprintf("from %d to %d MRDs (%d to %d active)", a.size.mrds, c.size.mrds, a.size.active(), c.size.active()), rssFlatMRDs
		if a.size.mrds == c.size.mrds {
			what, limit = fmt.Sprintf("from %d to %d Compositions", a.size.compositions, c.size.compositions), rssFlat
		}
		flat = flat && grew <= limit
		sep := ";"
		if i == len(rows)-1 {
			sep = "."
		}
		fmt.Fprintf(&b, " %s, %s → %s (%+.0f%%)%s", what, rssOf(a.rss, a.floor), rssOf(c.rss, c.floor), 100*grew, sep)
	}
	goal := "met"
	if !flat {
		goal = "not met"
	}
	fmt.Fprintf(&b, " Goal (memory flat: at most %.0f%% more with ten times the Compositions, %.0f%% with ten times the MRDs, whose names the plan keeps): %s.", 100*rssFlat, 100*rssFlatMRDs, goal)
	return b.String()
}

// actTimeSentence says how long the plan took at the slowest size,
// against the raw read of every MRD.
func actTimeSentence(rows []*actRow) string {
	slowest := slices.MaxFunc(rows, func(a, b *actRow) int { return cmp.Compare(medianDuration(a.walls), medianDuration(b.walls)) })
	med := medianDuration(slowest.walls)
	goal := "met"
	if med >= time.Minute {
		goal = "not met"
	}
	var ratios []string
	for _, w := range rows {
		ratios = append(ratios, ratio(medianDuration(w.walls), medianDuration(w.rawWalls)))
	}
	return fmt.Sprintf("The plan's slowest median was %s, at %s (the raw read of every MRD: %s); plan / raw read at each size: %s. Goal (seconds, not minutes): %s.",
		ms(med), slowest.size, ms(medianDuration(slowest.rawWalls)), strings.Join(ratios, ", "), goal)
}
