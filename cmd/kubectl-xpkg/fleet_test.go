package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// fleetRepo is the repository every cluster's test package runs.
const fleetRepo = "fleet/provider-fleet"

// startFleetServers starts n more API servers (etcd, kube-apiserver, the
// Crossplane CRDs; no registry) at once, stopped with the test.
func startFleetServers(t *testing.T, n int) []*testenv.Env {
	t.Helper()
	bin, err := testenv.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	envs := make([]*testenv.Env, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			var err error
			envs[i], err = testenv.Start(ctx, testenv.Options{Dir: t.TempDir(), BinDir: bin, NoRegistry: true})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range envs {
		t.Cleanup(func() { _ = e.Stop() })
	}
	return envs
}

// installFleetPackage writes provider fleet-provider (running v1.0.0 of
// fleetRepo on the registry at host) as the package manager would.
func installFleetPackage(t *testing.T, env *testenv.Env, host string) {
	t.Helper()
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": "fleet-provider"}, "spec": map[string]any{"package": host + "/" + fleetRepo + ":v1.0.0"}}}
	created, err := dyn.Resource(providersGVR).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(providersGVR).Delete(context.Background(), "fleet-provider", metav1.DeleteOptions{})
	})
	created.Object["status"] = map[string]any{"currentRevision": "fleet-provider-0123456789ab",
		"conditions": []any{map[string]any{"type": "Installed", "status": "True", "reason": "ActivePackageRevision", "lastTransitionTime": "2026-01-01T00:00:00Z"},
			map[string]any{"type": "Healthy", "status": "True", "reason": "HealthyPackageRevision", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	if _, err := dyn.Resource(providersGVR).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// fleetContext is a context of the test's kubeconfig: user's context of
// env's kubeconfig; with exec, env's admin token handed over by an exec
// credential plugin (exec, logging the context it runs for); without env,
// the server slow, which takes connections and never answers.
type fleetContext struct {
	env  *testenv.Env
	user string
	exec string
	slow string
}

// fleetKubeconfig writes a kubeconfig of the contexts named.
func fleetKubeconfig(t *testing.T, path string, contexts map[string]fleetContext) {
	t.Helper()
	out := clientcmdapi.NewConfig()
	for name, c := range contexts {
		if c.env == nil {
			out.Clusters[name] = &clientcmdapi.Cluster{Server: "https://" + c.slow, InsecureSkipTLSVerify: true}
			out.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "nobody"}
			out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
			continue
		}
		in, err := clientcmd.LoadFromFile(c.env.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		src := in.Contexts[c.user]
		out.Clusters[name] = in.Clusters[src.Cluster]
		out.AuthInfos[name] = in.AuthInfos[src.AuthInfo]
		if c.exec != "" {
			token := in.AuthInfos[testenv.ContextToken].Token
			out.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1",
				Command: c.exec, Args: []string{name, token}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
		}
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	out.CurrentContext = "alpha"
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
}

// execPlugin writes an exec credential plugin that logs its first
// argument (the context) and hands over its second as the token.
func execPlugin(t *testing.T) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	path, log = filepath.Join(dir, "credential-plugin"), filepath.Join(dir, "ran")
	script := "#!/bin/sh\necho \"$1\" >> " + log + "\n" +
		`printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$2"` + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// hangingPlugin writes an exec credential plugin that never returns, as a
// login waiting for a browser: it records its process ID, then sleeps. The
// test ends every one it started.
func hangingPlugin(t *testing.T) (path, pids string) {
	t.Helper()
	dir := t.TempDir()
	path, pids = filepath.Join(dir, "login-helper"), filepath.Join(dir, "pids")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho $$ >> "+pids+"\nexec sleep 3600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		got, _ := os.ReadFile(pids)
		for _, f := range strings.Fields(string(got)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return path, pids
}

// blackhole accepts connections and never answers, until the test ends.
func blackhole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return l.Addr().String()
}

// fleetSetup pushes the package's repository, starts beta and gamma,
// installs the package on the three, writes the kubeconfig of the test's
// contexts and stops gamma; it returns the session, the registry host,
// the exec plugin's log, and the hanging plugin and its process IDs.
func fleetSetup(t *testing.T) (x *clitest.Test, host, execLog string, hang [2]string) {
	t.Helper()
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	host = reg.Host
	auth := remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})
	for i, tag := range []string{"v1.0.0", "v1.1.0"} {
		img, err := fixture.Image(fmt.Appendf(nil, "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-fleet\n  annotations:\n    push: %q\n", fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := fixture.Push(reg.Host+"/"+fleetRepo+":"+tag, img, auth); err != nil {
			t.Fatal(err)
		}
	}
	more := startFleetServers(t, 2)
	beta, gamma := more[0], more[1]
	for _, e := range []*testenv.Env{env, beta, gamma} {
		installFleetPackage(t, e, reg.Host)
	}
	x = clitest.New(t).WithEnv(env)
	kubeconfig := t.TempDir() + "/kubeconfig"
	plugin, log := execPlugin(t)
	execLog = log
	hang[0], hang[1] = hangingPlugin(t)
	fleetKubeconfig(t, kubeconfig, map[string]fleetContext{
		"alpha": {env: env, user: testenv.ContextAdmin}, "beta": {env: beta, user: testenv.ContextAdmin},
		"beta-denied": {env: beta, user: testenv.ContextUser}, "gamma": {env: gamma, user: testenv.ContextAdmin},
		"slow":       {slow: blackhole(t)},
		"exec-alpha": {env: env, user: testenv.ContextAdmin, exec: plugin}, "exec-beta": {env: beta, user: testenv.ContextAdmin, exec: plugin},
		"hang": {env: beta, user: testenv.ContextAdmin, exec: hang[0]},
	})
	x.Setenv("KUBECONFIG", kubeconfig)
	// gamma answers once (its discovery is cached), then stops: its
	// cached discovery must not pass for an answer.
	x.Run("get", "--context", "gamma").Succeeds(t)
	if _, err := gamma.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	return x, host, execLog, hang
}

// TestFleet runs the read verbs across three real API servers at once,
// each with the package installed: alpha (the shared environment) and
// beta answer; beta-denied is beta under an identity RBAC denies packages;
// gamma's API server is stopped (after one answer, so that its discovery
// is cached); slow takes connections and never answers. The answering
// clusters' rows print, sorted by cluster; the others' rows say why, with
// one error line each on stderr, and exit status 1. exec-alpha and
// exec-beta get their tokens from an exec plugin, run per context; hang's
// never returns. One exact --context prints as it always did.
func TestFleet(t *testing.T) {
	x, host, execLog, hang := fleetSetup(t)
	start := time.Now()
	r := x.Run("get", "fleet-provider", "--context", "beta*", "--context", "gamma", "--context", "alpha", "--context", "slow", "--request-timeout", "15s").Fails(t, 1)
	if d := time.Since(start); d > waitBound {
		t.Errorf("a cluster that never answers held the table %s with --request-timeout 15s", d)
	}
	rows := fleetRows(r.Stdout)
	want := []string{"CLUSTER NAME KIND PACKAGE VERSION INSTALLED HEALTHY REVISION AGE",
		"alpha fleet-provider Provider " + host + "/" + fleetRepo + " v1.0.0 True True fleet-provider-0123456789ab",
		"beta fleet-provider Provider " + host + "/" + fleetRepo + " v1.0.0 True True fleet-provider-0123456789ab",
		"beta-denied <forbidden>", "gamma <unreachable>", "slow <unreachable>"}
	if !slices.Equal(rows, want) {
		t.Errorf("get across the fleet:\n%s\nwant rows (AGE aside):\n%s", r.Stdout, strings.Join(want, "\n"))
	}
	for _, c := range []string{"beta-denied", "gamma", "slow"} {
		if !strings.Contains(r.Stderr, "error: context "+c+": ") {
			t.Errorf("stderr has no error line for %s:\n%s", c, r.Stderr)
		}
	}
	if n := strings.Count(r.Stderr, "error: "); n != 3 {
		t.Errorf("%d error lines, want 3:\n%s", n, r.Stderr)
	}

	// One exact context: as always, no CLUSTER column, the object itself.
	r = x.Run("get", "fleet-provider", "--context", "beta", "-o", "yaml").Succeeds(t)
	if strings.Contains(r.Stdout, "cluster:") || !strings.HasPrefix(r.Stdout, "apiVersion: pkg.crossplane.io/v1\nkind: Provider\n") {
		t.Errorf("get --context beta -o yaml changed:\n%s", r.Stdout)
	}
	r = x.Run("get", "--context", "beta").Succeeds(t)
	if !strings.HasPrefix(r.Stdout, "NAME ") {
		t.Errorf("get --context beta has other columns:\n%s", r.Stdout)
	}

	// Each context's exec plugin runs for it, and hands over its own
	// cluster's token: one sent to the other cluster would be refused.
	r = x.Run("get", "fleet-provider", "--context", "exec-*", "--no-headers").Succeeds(t)
	if rows := fleetRows(r.Stdout); len(rows) != 2 || !strings.HasPrefix(rows[0], "exec-alpha fleet-provider") || !strings.HasPrefix(rows[1], "exec-beta fleet-provider") {
		t.Errorf("get through exec plugins:\n%s%s", r.Stdout, r.Stderr)
	}
	got, _ := os.ReadFile(execLog)
	if ran := slices.Compact(slices.Sorted(slices.Values(strings.Fields(string(got))))); !slices.Equal(ran, []string{"exec-alpha", "exec-beta"}) {
		t.Errorf("the exec plugin ran for %q, want for each context", got)
	}

	checkFleetHangingPlugin(t, x, host, hang)
	checkFleetJSON(t, x, host)
	checkFleetOthers(t, x)
}

// checkFleetHangingPlugin: a context whose credential plugin never
// returns is <unreachable> once --request-timeout has passed for its
// whole read, with an error line naming it and its plugin; the other's
// rows print, and the command ends without waiting for the plugin. Then,
// interrupted while the plugin runs (no bound worth the name), the
// command ends at once and names the context it was still reading.
func checkFleetHangingPlugin(t *testing.T, x *clitest.Test, host string, hang [2]string) {
	t.Helper()
	r := runWithin(t, x, 2*time.Minute, "get", "fleet-provider", "--context", "alpha", "--context", "hang", "--request-timeout", "15s").Fails(t, 1)
	want := []string{"CLUSTER NAME KIND PACKAGE VERSION INSTALLED HEALTHY REVISION AGE",
		"alpha fleet-provider Provider " + host + "/" + fleetRepo + " v1.0.0 True True fleet-provider-0123456789ab",
		"hang <unreachable>"}
	if rows := fleetRows(r.Stdout); !slices.Equal(rows, want) {
		t.Errorf("get with a credential plugin that hangs:\n%s%s\nwant rows (AGE aside):\n%s", r.Stdout, r.Stderr, strings.Join(want, "\n"))
	}
	contains(t, "get with a credential plugin that hangs", r.Stderr, "error: context hang: no answer within 15s (the whole read, its credential plugin "+hang[0]+" included)")

	run := x.Start("outdated", "--context", "alpha", "--context", "hang", "--request-timeout", "1h")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if got, _ := os.ReadFile(hang[1]); strings.Count(string(got), "\n") >= 2 {
			break // the second run's plugin is running
		}
		if time.Now().After(deadline) {
			t.Fatal("the credential plugin never started")
		}
	}
	if err := run.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r = waitWithin(t, run, 2*time.Minute)
	if r.ExitCode != 130 {
		t.Errorf("interrupted: exit %d, want 130\n%s", r.ExitCode, r.Stderr)
	}
	contains(t, "interrupted", r.Stderr, "interrupted by SIGINT", "context hang: still reading it when interrupted (credential plugin "+hang[0]+")")
}

// runWithin runs the command, killing it (and failing) if it has not
// ended after a generous while.
func runWithin(t *testing.T, x *clitest.Test, d time.Duration, args ...string) *clitest.Result {
	t.Helper()
	return waitWithin(t, x.Start(args...), d)
}

func waitWithin(t *testing.T, run *clitest.Running, d time.Duration) *clitest.Result {
	t.Helper()
	done := make(chan *clitest.Result, 1)
	go func() { done <- run.Wait() }()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		// Not waited for: a credential plugin left behind may hold its
		// output open (the test's cleanup ends it).
		_ = run.Signal(os.Kill)
		t.Fatalf("still running after %s: a context that never answers held it", d)
		return nil
	}
}

// fleetRows are a table's lines, columns single-spaced, AGE left out.
func fleetRows(out string) []string {
	var rows []string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 9 && f[0] != "CLUSTER" {
			f = f[:8]
		}
		rows = append(rows, strings.Join(f, " "))
	}
	return rows
}

// checkFleetJSON: get and outdated -o json put the cluster on each item
// and the clusters that did not answer under errors; outdated reads the
// repository for both clusters.
func checkFleetJSON(t *testing.T, x *clitest.Test, host string) {
	t.Helper()
	r := x.Run("get", "fleet-provider", "--context", "alpha", "--context", "beta", "--context", "gamma", "-o", "json").Fails(t, 1)
	var list struct {
		Items []struct {
			Cluster  string `json:"cluster"`
			Metadata struct{ Name string }
		}
		Errors []struct{ Cluster, Status, Error string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("get -o json: %v\n%s", err, r.Stdout)
	}
	if len(list.Items) != 2 || list.Items[0].Cluster != "alpha" || list.Items[1].Cluster != "beta" ||
		len(list.Errors) != 1 || list.Errors[0].Cluster != "gamma" || list.Errors[0].Status != "unreachable" {
		t.Errorf("get -o json across the fleet:\n%s", r.Stdout)
	}
	r = x.Run("outdated", "--context", "alpha", "--context", "beta*", "--context", "gamma", "-o", "json").Fails(t, 1)
	var rep struct {
		Items []struct {
			Cluster, Name, Current, Wanted, Latest, Error string
		}
		Errors []struct{ Cluster, Status string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("outdated -o json: %v\n%s", err, r.Stdout)
	}
	var got []string
	for _, it := range rep.Items {
		if it.Name == "fleet-provider" {
			got = append(got, it.Cluster+" "+it.Current+" "+it.Wanted+" "+it.Latest+" "+it.Error)
		}
	}
	if want := []string{"alpha v1.0.0 v1.1.0 v1.1.0 ", "beta v1.0.0 v1.1.0 v1.1.0 "}; !slices.Equal(got, want) {
		t.Errorf("outdated rows %q, want %q\n%s\n%s", got, want, r.Stdout, r.Stderr)
	}
	if len(rep.Errors) != 2 || rep.Errors[0].Cluster != "beta-denied" || rep.Errors[0].Status != "forbidden" || rep.Errors[1].Status != "unreachable" {
		t.Errorf("outdated errors: %+v", rep.Errors)
	}
}

// checkFleetOthers: doctor and version across the fleet, outdated's
// table, and a change verb refusing several contexts.
func checkFleetOthers(t *testing.T, x *clitest.Test) {
	t.Helper()
	r := x.Run("outdated", "--context", "beta", "--context", "gamma").Fails(t, 1)
	contains(t, "outdated table", r.Stdout, "CLUSTER   NAME", "gamma     <unreachable>")
	if !slices.ContainsFunc(fleetRows(r.Stdout), func(s string) bool { return strings.HasPrefix(s, "beta fleet-provider Provider v1.0.0 v1.1.0 v1.1.0") }) {
		t.Errorf("outdated table:\n%s", r.Stdout)
	}
	r = x.Run("doctor", "--context", "beta", "--context", "gamma").Fails(t, 1)
	contains(t, "doctor table", r.Stdout, "CLUSTER   PACKAGES", "LOCK-ENTRIES   FINDINGS", "gamma     <unreachable>")
	contains(t, "doctor stderr", r.Stderr, "error: context gamma: ")
	r = x.Run("version", "--context", "alpha", "--context", "beta").Succeeds(t)
	contains(t, "version", r.Stdout, "Client Version: ", "CLUSTER   SERVER-VERSION   PACKAGE-APIS", "beta      v")
	r = x.Run("install", "provider", "xpkg.example.org/p:v1", "--context", "b*").Fails(t, 1)
	contains(t, "install with a glob", r.Stderr, "--context names one cluster here")
}
