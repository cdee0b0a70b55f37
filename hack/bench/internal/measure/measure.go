// Package measure times benchmark commands as separate processes: the
// median wall time over several runs and the largest peak RSS seen.
//
// Each run goes through a small child process, the benchmark binary itself
// started with ChildArg as its first argument, which starts the command and
// reports its figures. Linux carries a process's peak RSS over fork and exec,
// so a command started directly by a benchmark holding large test data would
// report the benchmark's peak, not its own. A benchmark's main therefore
// begins with:
//
//	if len(os.Args) > 1 && os.Args[1] == measure.ChildArg {
//		if err := measure.Child(os.Args[2:]); err != nil {
//			log.Fatal(err)
//		}
//		return
//	}
//
// A benchmark binary is itself large, and a command smaller than the child
// (hello-world, 2 MiB) would report the child's footprint. UseLightChild
// builds a minimal child (./child, only the standard library) and makes
// Median and Interleave use it; every Result also carries the child's own
// peak at the time it started the command (Floor), below which a figure
// is the child's, not the command's.
package measure

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ChildArg is the first argument that makes a benchmark binary act as the
// measuring child.
const ChildArg = "measure"

// Result is a command's median wall time and peak RSS.
type Result struct {
	Wall  time.Duration
	RSS   int64 // KiB
	Floor int64 // KiB: the measuring child's own peak; RSS cannot read lower
	// CPU is the median CPU time (user and system) of the command and
	// the processes it waited for.
	CPU time.Duration
}

// AtFloor says whether the peak RSS is the measuring child's rather than
// the command's: an upper bound only.
func (r Result) AtFloor() bool { return r.RSS <= r.Floor }

// MiB is the peak RSS in MiB.
func (r Result) MiB() float64 { return float64(r.RSS) / 1024 }

// ServeChild runs the measuring child and exits when the program was
// started as one (with ChildArg first); otherwise it returns.
func ServeChild() {
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		if err := Child(os.Args[2:]); err != nil {
			log.Fatal(err)
		}
		os.Exit(0)
	}
}

// Child runs a command and prints its wall time (ns), its peak RSS (KiB),
// the child's own peak RSS before starting it (KiB) and the command's
// CPU time, user and system (ns), on stdout. args are the exit statuses that count as success besides 0, comma
// separated ("" for none), then the command and its arguments. The
// command's stdout goes to /dev/null, its stderr to ours.
func Child(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: %s OK-STATUSES COMMAND [ARG...]", ChildArg)
	}
	ok, err := parseStatuses(args[0])
	if err != nil {
		return err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	floor := selfPeak()
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdout = devnull // a file, as with > /dev/null: no pipe to copy through
	cmd.Stderr = os.Stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && slices.Contains(ok, exitErr.ExitCode()) {
		err = nil
	}
	if err != nil {
		return err
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	fmt.Printf("%d %d %d %d\n", wall.Nanoseconds(), ru.Maxrss, floor, cpu.Nanoseconds())
	return nil
}

// selfPeak is this process's peak RSS in KiB (VmHWM), which Linux hands on
// to the command it starts; 0 if unknown.
func selfPeak() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib
		}
	}
	return 0
}

// Median runs a command runs times, each through Child, and returns the
// median wall time and the largest peak RSS seen. ok lists the exit
// statuses besides 0 that count as success, e.g. 1 for GNU diff when the
// files differ; any other status is an error.
func Median(runs int, ok []int, bin string, args ...string) (Result, error) {
	rs, err := Interleave(runs, Command{OK: ok, Bin: bin, Args: args})
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// Command is one command to measure.
type Command struct {
	OK   []int // exit statuses besides 0 that count as success
	Bin  string
	Args []string
}

// Interleave runs each command runs times, taking turns (run 1 of every
// command, then run 2...) so that a change in the machine's load touches
// all of them alike, and returns each one's median wall time, median CPU
// time and largest peak RSS.
func Interleave(runs int, cmds ...Command) ([]Result, error) {
	walls, cpus := make([][]time.Duration, len(cmds)), make([][]time.Duration, len(cmds))
	out := make([]Result, len(cmds))
	for range runs {
		for i, c := range cmds {
			r, err := once(c)
			if err != nil {
				return nil, err
			}
			walls[i], cpus[i] = append(walls[i], r.Wall), append(cpus[i], r.CPU)
			out[i].RSS, out[i].Floor = max(out[i].RSS, r.RSS), max(out[i].Floor, r.Floor)
		}
	}
	for i := range cmds {
		out[i].Wall, out[i].CPU = median(walls[i]), median(cpus[i])
	}
	return out, nil
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// once runs a command through the measuring child.
func once(c Command) (Result, error) {
	child, args := lightChild, []string{}
	if child == "" {
		var err error
		if child, err = os.Executable(); err != nil {
			return Result{}, err
		}
		args = []string{ChildArg}
	}
	args = append(args, formatStatuses(c.OK), c.Bin)
	args = append(args, c.Args...)
	cmd := exec.Command(child, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("%s %v: %v: %s", c.Bin, c.Args, err, stderr.String())
	}
	var r Result
	var ns, cpu int64
	if _, err := fmt.Sscan(stdout.String(), &ns, &r.RSS, &r.Floor, &cpu); err != nil {
		return Result{}, fmt.Errorf("%s %v: measuring child said %q: %v", c.Bin, c.Args, stdout.String(), err)
	}
	r.Wall, r.CPU = time.Duration(ns), time.Duration(cpu)
	return r, nil
}

func formatStatuses(ok []int) string {
	s := make([]string, len(ok))
	for i, c := range ok {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

func parseStatuses(s string) ([]int, error) {
	var ok []int
	for f := range strings.SplitSeq(s, ",") {
		if f == "" {
			continue
		}
		c, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("exit statuses %q: %w", s, err)
		}
		ok = append(ok, c)
	}
	return ok, nil
}
