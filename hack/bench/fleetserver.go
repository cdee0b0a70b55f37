package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

// clockTick is the kernel's accounting unit of /proc/PID/stat times
// (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// serverCPU is the CPU time the environment's API server and etcd have
// used so far: what the clusters' side of a command costs, on the same
// CPUs when the API server is on loopback.
func (b *fleetBench) serverCPU() (time.Duration, error) {
	var total time.Duration
	for _, p := range b.env.Processes {
		if p.Name != "kube-apiserver" && p.Name != "etcd" {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
		if err != nil {
			return 0, err
		}
		// Fields after the command name (in parentheses): utime and stime
		// are the 12th and 13th.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		for _, s := range f[11:13] {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, err
			}
			total += time.Duration(n) * clockTick
		}
	}
	return total, nil
}

// serverCPUPerRun runs each command runs times, taking turns, and returns
// the API server's and etcd's CPU time per run of each (the mean: the
// kernel counts in 10 ms ticks).
func (b *fleetBench) serverCPUPerRun(runs int, cmds ...measure.Command) ([]time.Duration, error) {
	out := make([]time.Duration, len(cmds))
	for range runs {
		for i, c := range cmds {
			before, err := b.serverCPU()
			if err != nil {
				return nil, err
			}
			if _, err := measure.Interleave(1, c); err != nil {
				return nil, err
			}
			after, err := b.serverCPU()
			if err != nil {
				return nil, err
			}
			out[i] += after - before
		}
	}
	for i := range out {
		out[i] /= time.Duration(runs)
	}
	return out, nil
}
