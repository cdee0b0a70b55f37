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
package measure

import (
	"bytes"
	"errors"
	"fmt"
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
	Wall time.Duration
	RSS  int64 // KiB
}

// MiB is the peak RSS in MiB.
func (r Result) MiB() float64 { return float64(r.RSS) / 1024 }

// Child runs a command and prints its wall time (ns) and peak RSS (KiB) on
// stdout. args are the exit statuses that count as success besides 0, comma
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
	fmt.Printf("%d %d\n", wall.Nanoseconds(), ru.Maxrss)
	return nil
}

// Median runs a command runs times, each through Child, and returns the
// median wall time and the largest peak RSS seen. ok lists the exit
// statuses besides 0 that count as success, e.g. 1 for GNU diff when the
// files differ; any other status is an error.
func Median(runs int, ok []int, bin string, args ...string) (Result, error) {
	self, err := os.Executable()
	if err != nil {
		return Result{}, err
	}
	var walls []time.Duration
	var rss int64
	for range runs {
		childArgs := append([]string{ChildArg, formatStatuses(ok), bin}, args...)
		cmd := exec.Command(self, childArgs...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return Result{}, fmt.Errorf("%s %v: %v: %s", bin, args, err, stderr.String())
		}
		var ns, kib int64
		if _, err := fmt.Sscan(stdout.String(), &ns, &kib); err != nil {
			return Result{}, err
		}
		walls = append(walls, time.Duration(ns))
		rss = max(rss, kib)
	}
	slices.Sort(walls)
	return Result{Wall: walls[len(walls)/2], RSS: rss}, nil
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
