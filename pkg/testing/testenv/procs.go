package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// bindAttempts is how often startOnPorts starts a server that fails to bind.
const bindAttempts = 5

// startOnPorts reserves n ports and calls start with their numbers; start
// starts a server on them and waits until it is ready. A port can still be
// taken before the server binds it (by a program that pays no heed to the
// reservations, or as a source port where the ephemeral range left no room
// to draw outside it): when the server exits during start-up and its log
// shows it failed to bind, the ports are released, others reserved and the
// server started again, up to bindAttempts times. The log of a failed
// attempt is kept as <log>.<attempt>. The ports are returned whether or not
// the start succeeded, for the caller to release once the server is gone.
func startOnPorts(n int, start func(ports []int) (*process, error)) (*process, []*Port, error) {
	for attempt := 1; ; attempt++ {
		ports, err := reservePorts(n)
		if err != nil {
			return nil, nil, err
		}
		numbers := make([]int, n)
		for i, p := range ports {
			numbers[i] = p.Number()
		}
		if beforeStart != nil {
			beforeStart(attempt, numbers)
		}
		p, err := start(numbers)
		if err == nil || !failedToBind(p) {
			return p, ports, err
		}
		if attempt == bindAttempts {
			return p, ports, fmt.Errorf("%s failed to bind its ports %d times, on other ports each time; the last time: %w",
				p.name, bindAttempts, err)
		}
		releasePorts(ports)
		_ = os.Rename(p.log, p.log+"."+strconv.Itoa(attempt))
	}
}

// beforeStart, when set, is called by startOnPorts before each attempt: a
// test's way to take a port away from a real server.
var beforeStart func(attempt int, ports []int)

// failedToBind reports whether p has exited and its log tells of a port it
// could not bind.
func failedToBind(p *process) bool {
	if p == nil {
		return false
	}
	select {
	case <-p.done:
	default:
		return false // still running: not a start-up failure
	}
	b, err := os.ReadFile(p.log)
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("address already in use")) || bytes.Contains(b, []byte("bind: "))
}

// process is one server the environment started.
type process struct {
	name string
	pid  int
	log  string
	done chan struct{} // closed when the child exits (only while we are its parent)
}

// startProcess runs bin in a process group of its own, so that a Ctrl-C at
// the terminal reaches only the process that started it, which can then
// stop its servers in order. A detached process outlives a short-lived
// parent (`devenv up`) and is stopped by PID later; any other is killed by
// the kernel if the process that started it dies without stopping it.
// Output goes to <dir>/<name>.log.
func startProcess(dir, name, bin string, args []string, detached bool) (*process, error) {
	return startProcessEnv(dir, name, bin, args, nil, detached)
}

// startProcessEnv is startProcess with the child's environment (nil: ours).
func startProcessEnv(dir, name, bin string, args, env []string, detached bool) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !detached {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, pid: cmd.Process.Pid, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// waitReady polls ready until it reports true, the process exits, or the
// timeout passes; failures quote the end of the process's log.
func (p *process) waitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready(ctx) {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited during start-up; its log ends:\n%s", p.name, tail(p.log, 20))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s; its log ends:\n%s", p.name, timeout, tail(p.log, 20))
		case <-tick.C:
		}
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// stopPID ends a process the environment started, first politely, then not.
// It checks the command line first so that a recycled PID is left alone.
func stopPID(pid int, binary string) error {
	if !alive(pid) {
		return nil
	}
	if c := cmdline(pid); c != "" && !strings.Contains(c, filepath.Base(binary)) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A killed process still has to be torn down (an API server's few
	// hundred MiB take a while on a loaded machine): it is given as long.
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline = time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !alive(pid) {
			return nil
		}
	}
	return fmt.Errorf("process %d (%s) did not stop", pid, binary)
}

// alive reports whether pid runs; a zombie (exited, not yet reaped by a
// parent that is gone) counts as stopped.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func cmdline(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	return string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
}
