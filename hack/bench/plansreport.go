package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

// The goals of issue 21, which the tables make checkable.
const (
	goalRatio  = 8.0
	goalRSSMiB = 256.0
)

func writePlans(r *report, cfg *config, rows []*planRow) {
	var runs []string
	for _, w := range rows {
		runs = append(runs, fmt.Sprintf("%d at %d CRDs", runsAt(cfg, w.n), w.n))
	}
	r.printf("Runs of each plan and of the raw LIST, taking turns: %s; wall times are medians, peak RSS the largest. "+
		"**Goals: each plan within %.0f× the raw LIST of every CRD measured with it, and at most %.0f MiB peak RSS, flat as the provider grows.**\n\n",
		strings.Join(runs, ", "), goalRatio, goalRSSMiB)
	r.printf("| CRDs | command | wall (median) | peak RSS | raw LIST (median, same turns) | **/ raw LIST** | goals |\n|---|---|---|---|---|---|---|\n")
	for _, w := range rows {
		list := w.cmds[0].list
		r.printf("| %d | `kubectl get --raw /apis/apiextensions.k8s.io/v1/customresourcedefinitions` | %s | %s | — | — | — |\n",
			w.n, ms(list.Wall), rssOf(list.RSS, list.Floor))
		for _, c := range w.cmds {
			r.printf("| %d | %s --dry-run -o json | %s | %s | %s | %s | %s |\n", w.n, c.label, ms(c.res.Wall), rssOf(c.res.RSS, c.res.Floor),
				ms(c.list.Wall), ratio(c.res.Wall, c.list.Wall), goals(c.res, c.list))
		}
	}
	writePlanRequests(r, rows)
	writeWait(r, rows)
}

// goals says whether a plan meets the time and memory goals.
func goals(res, list measure.Result) string {
	var missed []string
	if res.Wall.Seconds() > goalRatio*list.Wall.Seconds() {
		missed = append(missed, "time")
	}
	if res.MiB() > goalRSSMiB {
		missed = append(missed, "memory")
	}
	if len(missed) == 0 {
		return "met"
	}
	return "missed: " + strings.Join(missed, ", ")
}

// requestCells are a request count's cells: the total, the CRD reads
// (GET / LIST / WATCH), then the other classes.
func requestCells(n map[string]int) string {
	total := 0
	for _, v := range n {
		total += v
	}
	return fmt.Sprintf("%d | **%d** (%d / %d / %d) | %d | %d | %d | %d | %d", total, crdReads(n), n[reqCRDGet], n[reqCRDList], n[reqCRDWatch],
		n[reqPkg], n[reqList], n[reqGet], n[reqOther], n[reqDiscovery])
}

const requestHeader = "requests | **reading CRDs** (GET / LIST / WATCH) | pkg.crossplane.io | other LIST | other GET | other | discovery"

func writePlanRequests(r *report, rows []*planRow) {
	r.printf("\nRequests of each plan, from its `-v=6` log (discovery cached); other LISTs include the counts of live objects, one LIST per kind. " +
		"**Goal: the requests that read CRDs do not grow with their number.** Findings: what the checked plan found, by rule.\n\n")
	r.printf("| CRDs | command | %s | findings |\n|---|---|---|---|---|---|---|---|---|---|\n", requestHeader)
	for _, w := range rows {
		for _, c := range w.cmds {
			r.printf("| %d | %s | %s | %s |\n", w.n, c.label, requestCells(c.reqs), summary(c.found))
		}
	}
	r.printf("\n")
	for i, c := range rows[0].cmds {
		r.printf("- %s %s.\n", c.label, trend(rows, func(w *planRow) map[string]int { return w.cmds[i].reqs }))
	}
	var null []string
	for _, w := range rows {
		if w.emptyNull {
			null = append(null, fmt.Sprint(w.n))
		}
	}
	if len(null) == 0 {
		r.printf("- The uninstall of the configuration (no dependents, no CRDs) finds nothing and prints `\"findings\": []`.\n\n")
	} else {
		r.printf("- The uninstall of the configuration (no dependents, no CRDs) finds nothing but prints `\"findings\": null` (at %s CRDs), where scripts expect a list: `[]`.\n\n", strings.Join(null, ", "))
	}
}

// trend says how the CRD reads of a command go with the CRDs.
func trend(rows []*planRow, reqs func(*planRow) map[string]int) string {
	var reads []string
	for _, w := range rows {
		reads = append(reads, fmt.Sprint(crdReads(reqs(w))))
	}
	verdict := ": the same at every size"
	switch {
	case len(rows) == 1:
		verdict = " (one size: no trend)"
	case len(slices.Compact(slices.Clone(reads))) > 1:
		verdict = ": they grow with the CRDs"
	}
	return fmt.Sprintf("reads CRDs in %s requests at %s CRDs%s", strings.Join(reads, ", "), sizeList(rows), verdict)
}

func sizeList(rows []*planRow) string {
	var s []string
	for _, w := range rows {
		s = append(s, fmt.Sprint(w.n))
	}
	return strings.Join(s, ", ")
}

func writeWait(r *report, rows []*planRow) {
	r.printf("`kubectl-xpkg install provider REF NAME --wait` of a provider whose revision installs as many CRDs. " +
		"**Goal: the plugin exits within seconds of the last definition becoming established, with no request per definition.** " +
		"Requests: those after the one that created the package, from the `-v=6` log.\n\n")
	r.printf("| CRDs | last definition Established → exit | the stand-in's install (revision, CRDs, status) | start → exit | %s |\n|---|---|---|---|---|---|---|---|---|---|---|\n", requestHeader)
	for _, w := range rows {
		r.printf("| %d | %s | %s | %s | %s |\n", w.n, seconds(w.wait.lag), seconds(w.wait.installing), seconds(w.wait.total), requestCells(w.wait.reqs))
	}
	r.printf("\nWhile it waits, install --wait %s.\n\n", trend(rows, func(w *planRow) map[string]int { return w.wait.reqs }))
}

// seconds is a duration to a tenth of a second, which the wait's figures
// need (ms would read finer than a watch's delivery).
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
