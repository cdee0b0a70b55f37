package crossplane

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// shared is the package manager of one test binary, started by Get.
var shared struct {
	once sync.Once
	env  *testenv.Env
	xp   *Crossplane
	err  error
}

// DirEnvVar names a directory for Get's package manager to keep its logs,
// certificates and caches in, after the tests too; by default they go to a
// temporary directory removed at the end.
const DirEnvVar = "XPKG_CROSSPLANE_DIR"

// ArgsEnvVar holds more arguments of `crossplane core start` for Get's
// package manager, separated by spaces, e.g.
// "--enable-dependency-version-upgrades --enable-dependency-version-downgrades"
// (hack/test.sh sets it for the runs of the packages that ask for them);
// RecordRelease records them.
const ArgsEnvVar = "XPKG_CROSSPLANE_ARGS"

// Args are the arguments $XPKG_CROSSPLANE_ARGS gives `crossplane core start`.
func Args() []string { return strings.Fields(os.Getenv(ArgsEnvVar)) }

// startTimeout bounds init, the servers' start-up and the registry setup.
const startTimeout = 3 * testenv.StartBound

// Get returns the package manager of this test binary, running against env,
// started the first time a test asks and stopped after the last test (the
// package's TestMain must call testenv.Main). Without a built crossplane
// binary the test fails, loudly: only under -short does it skip, and says so.
func Get(t testing.TB, env *testenv.Env) *Crossplane {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped under -short: it runs the real Crossplane package manager")
	}
	shared.once.Do(func() { start(t, env) })
	switch {
	case shared.err != nil:
		t.Fatalf("the Crossplane package manager did not start: %v\n"+
			"(hack/build-crossplane.sh builds its binary; make test does both)", shared.err)
	case shared.env != env:
		t.Fatal("crossplane.Get: one test binary runs one package manager, for one environment")
	}
	return shared.xp
}

func start(t testing.TB, env *testenv.Env) {
	shared.env = env
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var log logWriter
	if testing.Verbose() {
		log = logWriter{t: t}
	}
	begin := time.Now()
	// A directory the caller names outlives the run, for reading the logs.
	shared.xp, shared.err = Start(ctx, env, Options{Log: log, Dir: os.Getenv(DirEnvVar), Args: Args()})
	if shared.err != nil {
		return
	}
	t.Logf("crossplane %s %v running against %s, started in %.1fs", shared.xp.Version, shared.xp.Args, env.APIServer, time.Since(begin).Seconds())
	xp := shared.xp
	testenv.AtExit(t, func() {
		if err := xp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	})
}

// logWriter sends Start's progress lines to the test that started it.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	if w.t != nil {
		w.t.Logf("%s", p)
	}
	return len(p), nil
}
