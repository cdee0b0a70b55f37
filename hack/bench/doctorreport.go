package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// writeDoctor writes the doctor benchmark's tables and what they show.
func writeDoctor(r *report, cfg *config, rows []*doctorRow) {
	r.printf("%d runs of doctor at each size, taking turns with the raw read; requests and bytes from one more run, through the proxy. "+
		"CRDs: the benchmark's, then every CRD in the cluster (Crossplane's own too) and the size of one uncompressed read of them all.\n\n", cfg.runs)
	r.printf("| providers | revisions | CRDs | requests | counting a paged LIST once | of which read CRDs | response bytes (of the CRD reads) | doctor (median; min–max) | raw read of every CRD (median) | doctor / raw read | peak RSS |\n")
	r.printf("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range rows {
		med, lo, hi := spreadOf(w.walls)
		list := medianDuration(w.rawWalls)
		r.printf("| %d | %d | %d (%d in all, %s) | %d | %d | %d | %s (%s) | %s; %s–%s | %s | %s | %s |\n",
			w.size.packages, w.size.revisions(), w.size.crds(), w.crdsInAll, mib(w.crdList), sumOf(allRequests(w)), sumOf(w.lists()), w.crdReads(),
			mib(w.bytes), mib(w.crdBytes), ms(med), ms(lo), ms(hi), ms(list), ratio(med, list), rssOf(w.rss, w.floor))
	}
	r.printf("\n")
	writeDoctorRequests(r, rows)
	r.para(requestSentence(rows))
	r.para(timeSentence(rows))
}

// writeDoctorRequests tabulates the requests of each size by verb and
// resource.
func writeDoctorRequests(r *report, rows []*doctorRow) {
	r.printf("Requests of one run by verb and resource, at each size (providers / revisions / CRDs):\n\n| request |")
	for _, w := range rows {
		r.printf(" %d / %d / %d |", w.size.packages, w.size.revisions(), w.size.crds())
	}
	r.printf("\n|---|%s\n", strings.Repeat("---|", len(rows)))
	for _, k := range requestKeys(rows, allRequests) {
		r.printf("| %s |", k)
		for _, w := range rows {
			if w.conts[k] > 0 {
				r.printf(" %d (%d paged LIST, limit %s) |", w.reqs[k], w.reqs[k]-w.conts[k], w.limits[k])
			} else {
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

// requestView is one way to count a row's requests by kind.
type requestView func(*doctorRow) map[string]int

func allRequests(w *doctorRow) map[string]int { return w.reqs }

// requestSentence says, from the counts, whether the requests stayed the
// same across sizes, counting every page and counting a paged LIST once,
// which changed, and what grew from size to size.
func requestSentence(rows []*doctorRow) string {
	var b strings.Builder
	lists := requestView((*doctorRow).lists)
	changed, listsChanged := changedKeys(rows, allRequests), changedKeys(rows, lists)
	goal := "met"
	switch {
	case len(changed) == 0:
		fmt.Fprintf(&b, "**Requests stayed the same across sizes**: the same %d at each, from %s to %s.", sumOf(rows[0].reqs), rows[0].size, rows[len(rows)-1].size)
	case len(listsChanged) == 0:
		fmt.Fprintf(&b, "**Requests stayed the same across sizes counting a paged LIST once** (the same %d at each), **not counting its pages**: %s requests, as %s.",
			sumOf(rows[0].lists()), joinInts(totals(rows, allRequests)), pagesPhrase(rows, changed))
		goal = "met counting a paged LIST as one request; not met counting each of its pages"
	default:
		fmt.Fprintf(&b, "**Requests did not stay the same across sizes**: %s requests (%s counting a paged LIST once); those that changed: %s.",
			joinInts(totals(rows, allRequests)), joinInts(totals(rows, lists)), pagesPhrase(rows, changed))
		goal = "not met"
	}
	for i := 1; i < len(rows); i++ {
		b.WriteString(" " + stepSentence(rows[i-1], rows[i]))
	}
	fmt.Fprintf(&b, " Goal (requests that do not grow with the CRDs or the revisions): %s.", goal)
	return b.String()
}

// pagesPhrase names the kinds of request whose count changed, with their
// counts, pages and, for CRDs, how many the cluster held.
func pagesPhrase(rows []*doctorRow, keys []string) string {
	var out []string
	for _, k := range keys {
		p := fmt.Sprintf("%s took %s requests", k, joinInts(counts(rows, allRequests, k)))
		if l := rows[len(rows)-1].limits[k]; l != "" {
			p += " (pages of at most " + l + ")"
		}
		if strings.HasSuffix(k, " customresourcedefinitions") {
			var n []int
			for _, w := range rows {
				n = append(n, w.crdsInAll)
			}
			p += " for " + joinInts(n) + " CRDs in the cluster"
		}
		out = append(out, p)
	}
	return strings.Join(out, "; ")
}

// stepSentence says what grew from one size to the next and what the
// requests did.
func stepSentence(a, b *doctorRow) string {
	var grew []string
	for _, g := range []struct {
		what     string
		from, to int
	}{{"providers", a.size.packages, b.size.packages}, {"revisions", a.size.revisions(), b.size.revisions()}, {"CRDs", a.size.crds(), b.size.crds()}} {
		if g.from != g.to {
			grew = append(grew, fmt.Sprintf("%s %d → %d", g.what, g.from, g.to))
		}
	}
	na, nb := sumOf(a.reqs), sumOf(b.reqs)
	reqs := fmt.Sprintf("the same %d requests", na)
	if na != nb {
		reqs = fmt.Sprintf("requests %d → %d (%d → %d counting a paged LIST once)", na, nb, sumOf(a.lists()), sumOf(b.lists()))
	}
	return fmt.Sprintf("With %s: %s.", strings.Join(grew, ", "), reqs)
}

// timeSentence says how long doctor took at the slowest size, against
// the raw read, and how its time grew from the first size to the last.
func timeSentence(rows []*doctorRow) string {
	first, last := rows[0], rows[len(rows)-1]
	slowest := slices.MaxFunc(rows, func(a, b *doctorRow) int { return cmp.Compare(medianDuration(a.walls), medianDuration(b.walls)) })
	med, raw := medianDuration(slowest.walls), medianDuration(slowest.rawWalls)
	goal := "met"
	if med >= time.Minute {
		goal = "not met"
	}
	var ratios []string
	for _, w := range rows {
		ratios = append(ratios, ratio(medianDuration(w.walls), medianDuration(w.rawWalls)))
	}
	return fmt.Sprintf("Doctor's slowest median was %s, at %s (the raw read of every CRD: %s); from the first size to the last its time grew %.2f×, the raw read's %.2f×; doctor / raw read at each size: %s. Goal (seconds, not minutes): %s.",
		ms(med), slowest.size, ms(raw),
		medianDuration(last.walls).Seconds()/medianDuration(first.walls).Seconds(),
		medianDuration(last.rawWalls).Seconds()/medianDuration(first.rawWalls).Seconds(), strings.Join(ratios, ", "), goal)
}

// requestKeys are the kinds of request any size made, sorted.
func requestKeys(rows []*doctorRow, view requestView) []string {
	keys := map[string]bool{}
	for _, w := range rows {
		for k := range view(w) {
			keys[k] = true
		}
	}
	return slices.Sorted(maps.Keys(keys))
}

// changedKeys are the kinds of request whose count differs between sizes.
func changedKeys(rows []*doctorRow, view requestView) []string {
	var out []string
	for _, k := range requestKeys(rows, view) {
		c := counts(rows, view, k)
		if slices.ContainsFunc(c, func(n int) bool { return n != c[0] }) {
			out = append(out, k)
		}
	}
	return out
}

func counts(rows []*doctorRow, view requestView, key string) []int {
	out := make([]int, len(rows))
	for i, w := range rows {
		out[i] = view(w)[key]
	}
	return out
}

func totals(rows []*doctorRow, view requestView) []int {
	out := make([]int, len(rows))
	for i, w := range rows {
		out[i] = sumOf(view(w))
	}
	return out
}

func sumOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// crdReads is how many requests read CRDs.
func (row *doctorRow) crdReads() int {
	n := 0
	for k, v := range row.reqs {
		if strings.HasSuffix(k, " customresourcedefinitions") {
			n += v
		}
	}
	return n
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// spreadOf is the median, the least and the most of some times.
func spreadOf(ds []time.Duration) (med, lo, hi time.Duration) {
	return medianDuration(ds), slices.Min(ds), slices.Max(ds)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
