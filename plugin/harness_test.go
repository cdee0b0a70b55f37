package plugin

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// cli runs the plugin's commands in-process over a fake cluster, as
// kubectl's tests run theirs over a TestFactory: the root command is built
// as NewCmdRoot builds it, with the fake as its one cluster, and a failure
// ends as main ends it (exit.Report: one "error: " line, the exit code).
// For what the commands print and how they end on states a test writes;
// what only an API server shows stays with the black-box tests of
// cmd/kubectl-xpkg (pkg/testing/clitest, pkg/testing/testenv).
//
//	x := newCLI(t, provider)
//	r := x.Run("get", "providers", "-o", "wide").Succeeds(t)
type cli struct {
	// Fake is the cluster, shared by every Run: what one command writes,
	// the next reads.
	Fake *fakecluster.Fake
	// Stdin is what the next Run reads on stdin.
	Stdin string
}

// result is what one command did.
type result struct {
	Args     []string
	Stdout   string
	Stderr   string
	ExitCode int
}

// newCLI is a user's shell over a fake cluster holding objs, in a fresh
// HOME with no kubeconfig and no registry credentials (t.Setenv: the
// test cannot run in parallel).
func newCLI(t *testing.T, objs ...*unstructured.Unstructured) *cli {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", filepath.Join(home, ".kube", "config"))
	t.Setenv("DOCKER_CONFIG", filepath.Join(home, ".docker"))
	return &cli{Fake: fakecluster.New(objs...)}
}

// Run runs `kubectl xpkg args...`.
func (c *cli) Run(args ...string) *result {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(c.Stdin), Out: &out, ErrOut: &errOut}
	root := newRoot(streams)
	c.Fake.NamespaceFlag = root.ConfigFlags.Namespace // -n
	root.getter = c.Fake
	cmd := root.command()
	// Never nil: cobra would read os.Args, the test binary's.
	cmd.SetArgs(append([]string{}, args...))
	code := exit.Report(&errOut, cmd.ExecuteContext(context.Background()))
	return &result{Args: args, Stdout: out.String(), Stderr: errOut.String(), ExitCode: code}
}

// Succeeds fails the test unless the command exited 0.
func (r *result) Succeeds(t testing.TB) *result {
	t.Helper()
	return r.Fails(t, 0)
}

// Fails fails the test unless the command exited with code.
func (r *result) Fails(t testing.TB, code int) *result {
	t.Helper()
	if r.ExitCode != code {
		t.Fatalf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Args, r.ExitCode, code, r.Stdout, r.Stderr)
	}
	return r
}

// contains fails the test for each of wants that got lacks.
func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// tableRow is the fields of the table line that starts with name.
func tableRow(table, name string) []string {
	for line := range strings.Lines(table) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return f
		}
	}
	return nil
}

// TestHarnessEndsAsMain: the harness maps a command's error as main does
// (one "error: " line, the usage code) and reaches the fake, not a server.
func TestHarnessEndsAsMain(t *testing.T) {
	x := newCLI(t)
	r := x.Run("version", "--no-such-flag").Fails(t, 1)
	if want := "error: unknown flag: --no-such-flag\nSee 'kubectl xpkg version --help' for usage.\n"; r.Stderr != want {
		t.Errorf("stderr = %q, want %q", r.Stderr, want)
	}
	r = x.Run("get").Succeeds(t)
	contains(t, "get over an empty cluster", r.Stderr, "No packages found.")
	if got := x.Fake.Requests(); len(got) == 0 || !strings.HasPrefix(got[0], "GET /apis/pkg.crossplane.io/") {
		t.Errorf("requests %v", got)
	}
}
