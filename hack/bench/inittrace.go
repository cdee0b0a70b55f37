package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// initCost is one package initialiser's cost: median clock time over the
// runs, heap bytes and allocations (the same every run, give or take).
type initCost struct {
	pkg    string
	clock  float64 // ms
	bytes  int64
	allocs int64
}

// initTrace is the package initialisers of one command.
type initTrace struct {
	runs  int
	total float64 // ms: median over runs of the sum of every init's clock
	costs []initCost
}

// traceInits runs `bin --help` runs times with GODEBUG=inittrace=1 and
// takes, for each package, the median of its init clock times.
func traceInits(bin string, runs int) (*initTrace, error) {
	clocks := map[string][]float64{}
	last := map[string]initCost{}
	var totals []float64
	for range runs {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "--help")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("GODEBUG=inittrace=1 %s --help: %v", bin, err)
		}
		var total float64
		for line := range strings.Lines(stderr.String()) {
			var c initCost
			var at float64
			if _, err := fmt.Sscanf(line, "init %s @%f ms, %f ms clock, %d bytes, %d allocs", &c.pkg, &at, &c.clock, &c.bytes, &c.allocs); err != nil {
				continue
			}
			clocks[c.pkg] = append(clocks[c.pkg], c.clock)
			last[c.pkg] = c
			total += c.clock
		}
		totals = append(totals, total)
	}
	if len(last) == 0 {
		return nil, fmt.Errorf("GODEBUG=inittrace=1 %s --help printed no init lines", bin)
	}
	t := &initTrace{runs: runs, total: median(totals)}
	for pkg, c := range last {
		c.clock = median(clocks[pkg])
		t.costs = append(t.costs, c)
	}
	return t, nil
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// write prints the totals and the ten costliest initialisers by time and
// by bytes allocated.
func (t *initTrace) write(r *report, wall time.Duration) {
	var bytes, allocs int64
	for _, c := range t.costs {
		bytes += c.bytes
		allocs += c.allocs
	}
	r.para(fmt.Sprintf(`Package initialisers of `+"`kubectl-xpkg --help`"+` (GODEBUG=inittrace=1, %d runs,
median per package): %d packages run an init; together %.1f ms (median of
the per-run sums; tracing itself slows them a little), %.1f MiB in %d
allocations. The %s wall time above is the whole process: loading the
binary, the runtime, these inits, then building the command tree and
printing help.`, t.runs, len(t.costs), t.total, float64(bytes)/(1<<20), allocs, ms(wall)))
	byClock := slices.Clone(t.costs)
	slices.SortFunc(byClock, func(a, b initCost) int { return cmp.Or(cmp.Compare(b.clock, a.clock), cmp.Compare(a.pkg, b.pkg)) })
	r.printf("Costliest by time:\n\n")
	writeInits(r, byClock[:min(10, len(byClock))], t.total)
	byBytes := slices.Clone(t.costs)
	slices.SortFunc(byBytes, func(a, b initCost) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.pkg, b.pkg)) })
	r.printf("Costliest by bytes allocated:\n\n")
	writeInits(r, byBytes[:min(10, len(byBytes))], t.total)
}

func writeInits(r *report, costs []initCost, total float64) {
	r.printf("| package | init clock (median) | share of all inits | bytes | allocs |\n|---|---|---|---|---|\n")
	for _, c := range costs {
		r.printf("| %s | %.2f ms | %.0f%% | %d | %d |\n", c.pkg, c.clock, 100*c.clock/total, c.bytes, c.allocs)
	}
	r.printf("\n")
}
