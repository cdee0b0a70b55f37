// Package clitest runs the built kubectl-xpkg binary the way a user does: in
// a temporary HOME with its own KUBECONFIG and DOCKER_CONFIG, directly or as
// `kubectl xpkg` through kubectl's plugin discovery.
//
//	r := clitest.New(t).WithEnv(testenv.Get(t)).Run("version")
//	r.Succeeds(t)
package clitest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// BinaryEnvVar names a prebuilt binary to test instead of building one.
const BinaryEnvVar = "XPKG_BINARY"

// Test is one user's shell: a home directory, environment and binary.
type Test struct {
	t       testing.TB
	home    string
	vars    map[string]string
	kubectl string
}

// Result is what one command did.
type Result struct {
	Args     []string
	Stdout   string
	Stderr   string
	ExitCode int
	// MaxRSSKiB is the command's peak resident memory in KiB, as Linux
	// counts it: no less than the test process's own peak when the command
	// started, which exec carries over.
	MaxRSSKiB int64
}

// New starts a user session in a fresh HOME with no kubeconfig and no
// registry credentials.
func New(t testing.TB) *Test {
	t.Helper()
	home := t.TempDir()
	bin := Binary(t)
	return &Test{t: t, home: home, vars: map[string]string{
		"HOME":          home,
		"KUBECONFIG":    filepath.Join(home, ".kube", "config"),
		"DOCKER_CONFIG": filepath.Join(home, ".docker"),
		// kubectl finds plugins on PATH.
		"PATH": filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}}
}

// WithEnv points the session at the test environment: its kubeconfig (all
// contexts, admin current) and its registry credentials.
func (x *Test) WithEnv(env *testenv.Env) *Test {
	x.t.Helper()
	copyFile(x.t, env.Kubeconfig, x.vars["KUBECONFIG"])
	if env.Registry != nil {
		copyFile(x.t, filepath.Join(env.Registry.DockerConfig, "config.json"), filepath.Join(x.vars["DOCKER_CONFIG"], "config.json"))
	}
	x.kubectl = env.Kubectl
	return x
}

// WithLogin adds registry credentials for host to the session's docker
// config.json, as `docker login` would (e.g. for a proxy in front of the
// environment's registry).
func (x *Test) WithLogin(host, user, password string) *Test {
	x.t.Helper()
	path := filepath.Join(x.vars["DOCKER_CONFIG"], "config.json")
	cfg := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			x.t.Fatal(err)
		}
	}
	auths, _ := cfg["auths"].(map[string]any)
	if auths == nil {
		auths = map[string]any{}
	}
	auths[host] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
	cfg["auths"] = auths
	b, err := json.Marshal(cfg)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o700)
	}
	if err == nil {
		err = os.WriteFile(path, b, 0o600)
	}
	if err != nil {
		x.t.Fatal(err)
	}
	return x
}

// Setenv sets a variable for the commands this session runs.
func (x *Test) Setenv(key, value string) *Test {
	x.vars[key] = value
	return x
}

// Home is the session's HOME directory.
func (x *Test) Home() string { return x.home }

// Run runs kubectl-xpkg with args.
func (x *Test) Run(args ...string) *Result {
	x.t.Helper()
	return x.exec(Binary(x.t), args)
}

// Kubectl runs `kubectl args...`, so `Kubectl("xpkg", "version")` goes
// through kubectl's plugin discovery. It uses the environment's kubectl, else
// one on PATH; without either the test is skipped, saying so.
func (x *Test) Kubectl(args ...string) *Result {
	x.t.Helper()
	k := x.kubectl
	if k == "" {
		var err error
		if k, err = exec.LookPath("kubectl"); err != nil {
			x.t.Skip("no kubectl available: skipping the plugin discovery check")
		}
	}
	return x.exec(k, args)
}

func (x *Test) exec(bin string, args []string) *Result {
	x.t.Helper()
	return x.start(bin, args).Wait()
}

// Running is a command started with Start.
type Running struct {
	t              testing.TB
	cmd            *exec.Cmd
	args           []string
	stdout, stderr syncBuffer
	exited         chan struct{} // closed once the command has ended
	err            error         // cmd.Wait's, once exited is closed
}

// syncBuffer is a buffer the command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start runs kubectl-xpkg with args in the background; Wait collects it.
func (x *Test) Start(args ...string) *Running {
	x.t.Helper()
	return x.start(Binary(x.t), args)
}

func (x *Test) start(bin string, args []string) *Running {
	x.t.Helper()
	r := x.prepare(bin, args)
	if err := r.cmd.Start(); err != nil {
		x.t.Fatalf("run %s %s: %v", bin, strings.Join(args, " "), err)
	}
	r.reap()
	return r
}

// reap collects the started command in the background, so that a test
// waiting for it to reach a point can also notice that it ended first.
func (r *Running) reap() {
	go func() {
		r.err = r.cmd.Wait()
		close(r.exited)
	}()
}

// prepare builds the command in the session, its output collected.
func (x *Test) prepare(bin string, args []string) *Running {
	r := &Running{t: x.t, args: args, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	r.cmd.Dir = x.home
	r.cmd.Env = x.environ()
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	return r
}

// Stderr is what the running command has written to stderr so far: a
// test waits on it for the command to reach a point, rather than sleeping.
func (r *Running) Stderr() string { return r.stderr.String() }

// Signal sends sig to the running command, as a terminal's Ctrl-C
// (os.Interrupt) or a process manager (SIGTERM) would.
func (r *Running) Signal(sig os.Signal) error { return r.cmd.Process.Signal(sig) }

// Exited is closed when the command has ended: a test waiting for the
// command to reach a point selects on it too, so that a command that
// ended (or failed) before that point fails the test with its output
// rather than leaving the wait to its deadline.
func (r *Running) Exited() <-chan struct{} { return r.exited }

// Wait waits for the command to end.
func (r *Running) Wait() *Result {
	r.t.Helper()
	<-r.exited
	err := r.err
	res := &Result{Args: r.args, Stdout: r.stdout.String(), Stderr: r.stderr.String()}
	if ps := r.cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSSKiB = ru.Maxrss
		}
	}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		r.t.Fatalf("run %s: %v", strings.Join(r.args, " "), err)
	}
	return res
}

// environ is the parent's environment minus anything that could point the
// command at the developer's own cluster or credentials, plus the session's.
func (x *Test) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := x.vars[k]; ours || k == testenv.EnvVar {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range x.vars {
		env = append(env, k+"="+v)
	}
	return env
}

// Succeeds fails the test unless the command exited 0.
func (r *Result) Succeeds(t testing.TB) *Result {
	t.Helper()
	if r.ExitCode != 0 {
		t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", r.Args, r.ExitCode, r.Stdout, r.Stderr)
	}
	return r
}

// Fails fails the test unless the command exited with code.
func (r *Result) Fails(t testing.TB, code int) *Result {
	t.Helper()
	if r.ExitCode != code {
		t.Fatalf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Args, r.ExitCode, code, r.Stdout, r.Stderr)
	}
	return r
}

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary is the kubectl-xpkg under test: $XPKG_BINARY, or one built from
// this checkout into _output/test-bin once per test binary.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		if p := os.Getenv(BinaryEnvVar); p != "" {
			build.path, build.err = filepath.Abs(p)
			return
		}
		build.path, build.err = buildBinary()
	})
	if build.err != nil {
		t.Fatalf("kubectl-xpkg binary: %v", build.err)
	}
	return build.path
}

func buildBinary() (string, error) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "_output", "test-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Build beside the final name and rename, so that test binaries building
	// at the same time never see a half-written file.
	tmp, err := os.CreateTemp(dir, ".kubectl-xpkg-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	cmd := exec.Command("go", "build", "-o", tmp.Name(), "./cmd/kubectl-xpkg")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp.Name())
		return "", errors.New("go build: " + string(out))
	}
	final := filepath.Join(dir, "kubectl-xpkg")
	return final, os.Rename(tmp.Name(), final)
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
