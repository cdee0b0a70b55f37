package testenv

import (
	"context"
	"net/http"
	"time"
)

// The exported process helpers let other harnesses that run servers against
// an environment (the real Crossplane, kube-controller-manager) follow the
// same lifetime rules as the environment's own servers.

// StartBound bounds how long a server may take to become ready. It is
// generous: it only runs out when a server is broken, never because the
// machine is loaded (several environments start at once under make test,
// beside the tests of other packages).
const StartBound = 5 * time.Minute

// Command describes a server for StartProcess.
type Command struct {
	// Name names the log file (<Dir>/<Name>.log) and the server in errors.
	Name string
	Dir  string
	Bin  string
	Args []string
	// Env is the server's whole environment; nil inherits ours.
	Env []string
	// Detached servers outlive the process that started them; others are
	// killed by the kernel when it dies.
	Detached bool
}

// Process is a server started by StartProcess.
type Process struct {
	p   *process
	bin string
}

// StartProcess runs a server, its output going to <Dir>/<Name>.log.
func StartProcess(c Command) (*Process, error) {
	p, err := startProcessEnv(c.Dir, c.Name, c.Bin, c.Args, c.Env, c.Detached)
	if err != nil {
		return nil, err
	}
	return &Process{p: p, bin: c.Bin}, nil
}

// PID is the server's process ID.
func (p *Process) PID() int { return p.p.pid }

// Log is the path of the server's log file.
func (p *Process) Log() string { return p.p.log }

// Done is closed when the server exits.
func (p *Process) Done() <-chan struct{} { return p.p.done }

// WaitReady polls ready until it reports true, the server exits, or timeout
// passes; failures quote the end of the server's log.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) bool) error {
	return p.p.waitReady(ctx, timeout, ready)
}

// Stop ends the server, first with SIGTERM, then SIGKILL.
func (p *Process) Stop() error { return stopPID(p.p.pid, p.bin) }

// StartOnPorts reserves n ports (see ReservePort) and calls start with
// their numbers; start starts a server on them (StartProcess) and waits
// until it is ready (WaitReady). When the server exits during start-up
// because a port was taken before it bound it (its log says "address
// already in use" or "bind: "), StartOnPorts releases the ports, reserves
// others and calls start again, a few times before it gives up with the
// last error. The log of a failed attempt is kept as <log>.<attempt>.
//
// The process (nil if none started) and the ports are returned whether or
// not the start succeeded: stop the one, then release the others.
func StartOnPorts(n int, start func(ports []int) (*Process, error)) (*Process, []*Port, error) {
	var last *Process
	_, ports, err := startOnPorts(n, func(ports []int) (*process, error) {
		p, err := start(ports)
		last = p
		if p == nil {
			return nil, err
		}
		return p.p, err
	})
	return last, ports, err
}

// Tail returns the last n lines of a log file, for error messages.
func Tail(path string, n int) string { return tail(path, n) }

// HTTPOK reports whether GET url answers 200 OK: a readiness probe.
func HTTPOK(ctx context.Context, c *http.Client, url string) bool { return httpOK(ctx, c, url) }
