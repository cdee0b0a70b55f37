package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

const (
	// mirrorRatioGoal is the most mirror may take against crane's sum.
	mirrorRatioGoal = 1.10
	// mirrorFlatKiB is how much more the large closure's peak RSS may be
	// than the small's and still be flat.
	mirrorFlatKiB = 5 << 10
	// mirrorNoopGoal is the most a second run may take per image.
	mirrorNoopGoal = 250 * time.Millisecond
)

// writeMirror writes the mirror benchmark's tables and what they show.
func writeMirror(r *report, cfg *config, storage string, rows []*mirrorRow) {
	r.printf("%d runs at each size, mirror and crane taking turns; the registries kept their blobs %s. "+
		"Closure: its 4 packages' manifests and distinct blobs (bytes at the source). Per run: mirror / crane's sum in each run, in order. "+
		"CPU: user and system time of the command (crane's: of its four copies), the median.\n\n", cfg.runs, storage)
	r.printf("| closure | mirror (median; min–max) | crane copy ×4, summed (median; min–max) | **mirror / crane sum** | per run | CPU: mirror / crane | mirror peak RSS | crane peak RSS (largest of the 4) | second mirror run (median) | **per image** |\n")
	r.printf("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range rows {
		m, mlo, mhi := spreadOf(w.mirror)
		c, clo, chi := spreadOf(w.crane)
		noop := medianDuration(w.noop)
		r.printf("| %s: %d blobs, %s | %s; %s–%s | %s; %s–%s | %s | %s | %s / %s | %s | %s | %s | %s |\n",
			w.size.name, w.blobs, mib(w.bytes), ms(m), ms(mlo), ms(mhi), ms(c), ms(clo), ms(chi), ratio(m, c), runRatios(w),
			ms(medianDuration(w.mirrorCPU)), ms(medianDuration(w.craneCPU)), rssOf(w.mirrorRSS, w.floor), rssOf(w.craneRSS, w.floor), ms(noop), ms(noop/4))
	}
	r.printf("\nThe second runs, to a destination that has every image (requests: one run's, to the destination only, through the proxy):\n\n")
	r.printf("| closure | second mirror run (median; min–max) | per image | its requests to the destination | peak RSS | crane copy ×4 again, summed (median) | per image | its requests to the destination | peak RSS (largest of the 4) |\n")
	r.printf("|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range rows {
		n, lo, hi := spreadOf(w.noop)
		a := medianDuration(w.again)
		r.printf("| %s | %s; %s–%s | %s | %s | %s | %s | %s | %s | %s |\n", w.size.name, ms(n), ms(lo), ms(hi), ms(n/4),
			describeRequests(w.noopReqs), rssOf(w.noopRSS, w.floor), ms(a), ms(a/4), describeRequests(w.againReqs), rssOf(w.againRSS, w.floor))
	}
	r.printf("\n")
	writeMirrorRSS(r, rows)
	r.para(mirrorTimeSentence(rows))
	r.para(mirrorRSSSentence(rows))
	r.para(mirrorNoopSentence(rows))
}

// runRatios are mirror / crane's sum, run by run.
func runRatios(w *mirrorRow) string {
	s := make([]string, len(w.mirror))
	for i := range w.mirror {
		s[i] = ratio(w.mirror[i], w.crane[i])
	}
	return strings.Join(s, ", ")
}

// writeMirrorRSS sets the peak RSS of each size side by side.
func writeMirrorRSS(r *report, rows []*mirrorRow) {
	first, last := rows[0], rows[len(rows)-1]
	r.printf("Peak RSS by closure size:\n\n| peak RSS |")
	for _, w := range rows {
		r.printf(" %s (%s) |", w.size.name, mib(w.bytes))
	}
	r.printf(" **%s − %s** |\n|---|%s---|\n", last.size.name, first.size.name, strings.Repeat("---|", len(rows)))
	for _, c := range []struct {
		what string
		rss  func(*mirrorRow) int64
	}{
		{"mirror", func(w *mirrorRow) int64 { return w.mirrorRSS }},
		{"mirror, second run", func(w *mirrorRow) int64 { return w.noopRSS }},
		{"crane copy (largest of the 4)", func(w *mirrorRow) int64 { return w.craneRSS }},
		{"crane copy again (largest of the 4)", func(w *mirrorRow) int64 { return w.againRSS }},
	} {
		r.printf("| %s |", c.what)
		for _, w := range rows {
			r.printf(" %s |", rssOf(c.rss(w), w.floor))
		}
		r.printf(" %+.1f MiB |\n", float64(c.rss(last)-c.rss(first))/1024)
	}
	r.printf("\n")
}

// describeRequests counts requests by method and kind of path.
func describeRequests(reqs []string) string {
	kinds := map[string]int{}
	for _, r := range reqs {
		method, path, _ := strings.Cut(r, " ")
		kind := "other"
		switch {
		case path == "/v2/":
			kind = "/v2/"
		case strings.Contains(path, "/blobs/uploads/"):
			kind = "upload"
		case strings.Contains(path, "/manifests/"):
			kind = "manifest"
		case strings.Contains(path, "/blobs/"):
			kind = "blob"
		}
		kinds[method+" "+kind]++
	}
	parts := []string{}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	return fmt.Sprintf("%d (%s)", len(reqs), strings.Join(parts, ", "))
}

// mirrorTimeSentence says mirror's time against crane's sum at each size.
func mirrorTimeSentence(rows []*mirrorRow) string {
	var parts []string
	met := true
	for _, w := range rows {
		m, c := medianDuration(w.mirror), medianDuration(w.crane)
		x := m.Seconds() / c.Seconds()
		met = met && x <= mirrorRatioGoal
		parts = append(parts, fmt.Sprintf("%s closure (%s): mirror %s, crane's four copies %s summed, %.2f× (%.0f MB/s against %.0f MB/s; CPU %s against %s)",
			w.size.name, mib(w.bytes), ms(m), ms(c), x, float64(w.bytes)/1e6/m.Seconds(), float64(w.bytes)/1e6/c.Seconds(),
			ms(medianDuration(w.mirrorCPU)), ms(medianDuration(w.craneCPU))))
	}
	return fmt.Sprintf("**Time**: %s. Goal (mirror at most %.1f× crane's sum): %s.", strings.Join(parts, "; "), mirrorRatioGoal, metOr(met))
}

// mirrorRSSSentence says whether mirror's peak RSS stayed flat from the
// smallest closure to the largest, with crane's beside it.
func mirrorRSSSentence(rows []*mirrorRow) string {
	first, last := rows[0], rows[len(rows)-1]
	grew := last.mirrorRSS - first.mirrorRSS
	return fmt.Sprintf("**Peak RSS**: from the %s closure to the %s one (%.0f× the bytes), mirror's peak RSS went %s → %s (%+.1f MiB), crane's largest %s → %s (%+.1f MiB). Goal (flat: within %d MiB): %s.",
		first.size.name, last.size.name, float64(last.bytes)/float64(first.bytes),
		rssOf(first.mirrorRSS, first.floor), rssOf(last.mirrorRSS, last.floor), float64(grew)/1024,
		rssOf(first.craneRSS, first.floor), rssOf(last.craneRSS, last.floor), float64(last.craneRSS-first.craneRSS)/1024,
		mirrorFlatKiB>>10, metOr(grew <= mirrorFlatKiB))
}

// mirrorNoopSentence says what a second run cost per image.
func mirrorNoopSentence(rows []*mirrorRow) string {
	var parts []string
	met := true
	for _, w := range rows {
		n := medianDuration(w.noop)
		met = met && n/4 <= mirrorNoopGoal
		parts = append(parts, fmt.Sprintf("%s closure: %s, %s per image, %d requests to the destination (crane copying the four again: %s summed, %d requests)",
			w.size.name, ms(n), ms(n/4), len(w.noopReqs), ms(medianDuration(w.again)), len(w.againReqs)))
	}
	return fmt.Sprintf("**Second run** (everything there, nothing copied): %s. Goal (well under a second per image; at most %s): %s.",
		strings.Join(parts, "; "), ms(mirrorNoopGoal), metOr(met))
}

func metOr(met bool) string {
	if met {
		return "met"
	}
	return "not met"
}
