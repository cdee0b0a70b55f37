package testenv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
)

// harness is the environment of one test binary, set up by Main.
var harness struct {
	main bool
	env  *Env
	err  error
	once sync.Once
	stop func()
	// atExit runs, newest first, after the tests and before stop.
	atExit []func()
	mu     sync.Mutex // guards atExit
}

var errShort = errors.New("-short: integration tests skipped")

// Main is a TestMain for packages with integration tests. It uses the
// environment named by $XPKG_TESTENV (make test starts one), or else starts
// a private one for this test binary, from the binaries hack/build-k8s.sh
// cached, the first time a test asks for it (so that unit tests and fuzzing
// alone never pay for it), and stops it afterwards.
func Main(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	harness.main = true
	code := m.Run()
	for i := len(harness.atExit) - 1; i >= 0; i-- {
		harness.atExit[i]()
	}
	if harness.stop != nil {
		harness.stop()
	}
	return code
}

func setup() {
	switch path := os.Getenv(EnvVar); {
	case path != "":
		harness.env, harness.err = Load(path)
		if harness.err != nil {
			harness.err = fmt.Errorf("$%s: %w", EnvVar, harness.err)
		}
	case testing.Short():
		harness.err = errShort
	default:
		harness.stop, harness.err = startPrivate()
	}
}

func startPrivate() (func(), error) {
	bin, err := DefaultBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "xpkg-testenv-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*StartBound)
	defer cancel()
	env, err := Start(ctx, Options{Dir: dir, BinDir: bin, CrossplaneVersion: os.Getenv("XPKG_CROSSPLANE_VERSION")})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start a private test environment: %w", err)
	}
	harness.env = env
	return func() { _ = env.Stop(); os.RemoveAll(dir) }, nil
}

// Get returns the environment. Without one the test fails, loudly: only
// under -short does it skip, and says so.
func Get(t testing.TB) *Env {
	t.Helper()
	if !harness.main {
		t.Fatal("testenv.Get called in a package whose TestMain does not call testenv.Main")
	}
	harness.once.Do(setup)
	switch {
	case harness.env != nil:
		return harness.env
	case errors.Is(harness.err, errShort):
		t.Skip("integration test skipped under -short: it needs the local cluster and registry")
	default:
		t.Fatalf("the local cluster and registry are not available: %v\n"+
			"Run `make test`, or `make dev-env` and export the %s it prints.", harness.err, EnvVar)
	}
	return nil
}

// AtExit registers f to run once the tests of the binary are done, before
// the environment stops: for harnesses that start something once per test
// binary on top of the environment (see Get). Functions run newest first.
// It must be called from a test, in a package whose TestMain calls Main.
func AtExit(t testing.TB, f func()) {
	t.Helper()
	if !harness.main {
		t.Fatal("testenv.AtExit called in a package whose TestMain does not call testenv.Main")
	}
	harness.mu.Lock()
	defer harness.mu.Unlock()
	harness.atExit = append(harness.atExit, f)
}

// RequireRegistry returns the environment's registry or fails the test.
func (e *Env) RequireRegistry(t testing.TB) *Registry {
	t.Helper()
	if e.Registry == nil {
		t.Fatal("the test environment was started without a registry")
	}
	return e.Registry
}
