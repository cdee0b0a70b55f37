package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestNoArgsPrintsHelp(t *testing.T) {
	r := clitest.New(t).Run().Succeeds(t)
	for _, want := range []string{"kubectl xpkg [command]", "version", "--kubeconfig", "--context", "-v, --v"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.Stdout)
		}
	}
}

func TestUnknownVerbIsAUsageError(t *testing.T) {
	r := clitest.New(t).Run("verison").Fails(t, 1)
	if !strings.HasPrefix(r.Stderr, `error: unknown command "verison" for "kubectl xpkg"`) {
		t.Errorf("stderr = %q", r.Stderr)
	}
	for _, want := range []string{"Did you mean this?", "\tversion", "Run 'kubectl xpkg --help' for usage."} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if r.Stdout != "" {
		t.Errorf("stdout should be empty, got %q", r.Stdout)
	}
}

func TestUnknownFlag(t *testing.T) {
	r := clitest.New(t).Run("version", "--no-such-flag").Fails(t, 1)
	want := "error: unknown flag: --no-such-flag\nSee 'kubectl xpkg version --help' for usage.\n"
	if r.Stderr != want {
		t.Errorf("stderr = %q, want %q", r.Stderr, want)
	}
}

func TestVersionClientOnly(t *testing.T) {
	r := clitest.New(t).Run("version", "--client", "-o", "json").Succeeds(t)
	var report struct {
		ClientVersion struct{ Version, GoVersion, Platform string }
		PackageAPIs   []any
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, r.Stdout)
	}
	if report.ClientVersion.Version == "" || report.ClientVersion.GoVersion == "" || report.PackageAPIs != nil {
		t.Errorf("unexpected report: %+v", report)
	}
}

func TestVersionWithoutClusterFailsInOneLine(t *testing.T) {
	r := clitest.New(t).Run("version", "--server", "https://127.0.0.1:1").Fails(t, 1)
	if !strings.HasPrefix(r.Stdout, "Client Version: ") {
		t.Errorf("client version missing from stdout: %q", r.Stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "cannot reach https://127.0.0.1:1: connection refused") {
		t.Errorf("want one line naming the unreachable server, got:\n%s", r.Stderr)
	}
}

// TestVersionWithATokenContext: version reads the server's version and
// package APIs as a user authenticated by a bearer token. (What version
// prints from discovery: plugin's TestVersionAgainstACluster, over a fake
// cluster.)
func TestVersionWithATokenContext(t *testing.T) {
	env := testenv.Get(t)
	r := clitest.New(t).WithEnv(env).Run("version", "-o", "json", "--context", testenv.ContextToken).Succeeds(t)
	var report struct {
		ServerVersion struct{ GitVersion string }
		PackageAPIs   []struct {
			Group    string
			Versions []struct {
				Version string
				Kinds   []string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(report.ServerVersion.GitVersion, "v1.") {
		t.Errorf("server version = %q", report.ServerVersion.GitVersion)
	}
	if len(report.PackageAPIs) == 0 || report.PackageAPIs[0].Group != "pkg.crossplane.io" {
		t.Fatalf("package APIs = %+v", report.PackageAPIs)
	}
}

// TestVersionThroughKubectl runs the plugin as users do: `kubectl xpkg`.
func TestVersionThroughKubectl(t *testing.T) {
	env := testenv.Get(t)
	r := clitest.New(t).WithEnv(env).Kubectl("xpkg", "version").Succeeds(t)
	assertServesPackageKinds(t, r.Stdout)

	r = clitest.New(t).WithEnv(env).Kubectl("plugin", "list").Succeeds(t)
	if !strings.Contains(r.Stdout, "kubectl-xpkg") {
		t.Errorf("kubectl plugin list does not show kubectl-xpkg:\n%s", r.Stdout)
	}
}

func assertServesPackageKinds(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{"Server Version: v1.", "pkg.crossplane.io", "Provider", "ProviderRevision", "Configuration", "Function", "Lock"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
}

// TestUserAgentNamesThePlugin: API requests (discovery included) name the
// plugin and its version as kubectl names itself, not client-go's
// unstamped "v0.0.0 ... kubernetes/$Format".
func TestUserAgentNamesThePlugin(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.URL.Path+": "+r.UserAgent())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	clitest.New(t).Run("get", "--server", srv.URL).Fails(t, 1)
	mu.Lock()
	defer mu.Unlock()
	if len(agents) == 0 {
		t.Fatal("no request reached the server")
	}
	for _, a := range agents {
		if !strings.Contains(a, ": kubectl-xpkg/") || strings.Contains(a, "$Format") || strings.Contains(a, "v0.0.0") {
			t.Errorf("User-Agent %q", a)
		}
	}
}
