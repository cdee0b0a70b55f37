package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

// apiProxy puts a fault proxy in front of the test API server and returns
// it with a CLI whose kubeconfig points there (the proxy speaks to the API
// server with the environment's admin credentials).
func apiProxy(t *testing.T, l *lifecycle) (*faultproxy.Proxy, *clitest.Test) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", l.env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.StartTLS(cfg.Host, rt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	x := clitest.New(t).WithEnv(l.env)
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: "https://%s", insecure-skip-tls-verify: true}}]
users: [{name: proxy, user: {token: the-proxy-authenticates}}]
contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]
current-context: proxy
`, p.Host)
	if err := os.WriteFile(filepath.Join(x.Home(), ".kube", "config"), []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, x
}

// faultTimeout is the --request-timeout of the fault tests: only the
// request a fault holds back may run into it, so it is generous for every
// other request (discovery, reads) on a loaded machine.
const faultTimeout = "10s"

// noPanic: a failure is one error line, never a Go panic or a stack.
func noPanic(t *testing.T, what string, r *clitest.Result) {
	t.Helper()
	for _, bad := range []string{"panic:", "goroutine ", "nil pointer", "runtime error"} {
		if strings.Contains(r.Stdout+r.Stderr, bad) {
			t.Fatalf("%s: %q in its output:\n%s%s", what, bad, r.Stdout, r.Stderr)
		}
	}
}

// TestChangesThroughAFaultyAPIServer sends upgrades and uninstalls through
// a proxy that refuses, holds back, cuts short and lets land their PATCH
// and DELETE requests: every one ends with an error line and the exit code
// docs/exit-codes.md gives, never a panic, and the cluster is where the message
// says: refused means unchanged; cut short means maybe landed, and
// --atomic interrupted puts back what landed.
func TestChangesThroughAFaultyAPIServer(t *testing.T) {
	l := newLifecycle(t)
	first, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	newer, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "faulty-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	direct := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { direct.Run("uninstall", name, "--force") })
	direct.Run("install", "provider", first, name, "--wait=60s").Succeeds(t)
	p, x := apiProxy(t, l)
	patch := "PATCH /apis/pkg.crossplane.io/v1/providers/" + name
	del := "DELETE /apis/pkg.crossplane.io/v1/providers/" + name
	back := func() {
		t.Helper()
		p.Clear()
		if l.packageSource(t, name) != first {
			direct.Run("upgrade", name, "v0.2.1", "--force", "--wait=60s").Succeeds(t)
		}
	}

	t.Run("PATCH refused", func(t *testing.T) {
		defer back()
		p.Add(faultproxy.Fault{Match: patch, Status: 503})
		r := x.Run("upgrade", name, "v0.4.0").Fails(t, 1)
		noPanic(t, "upgrade", r)
		contains(t, "refused upgrade", r.Stderr, "error: upgrade provider/"+name+": ")
		if src := l.packageSource(t, name); src != first {
			t.Errorf("a refused PATCH changed the package: %s", src)
		}
	})

	// The held request outlasts any --request-timeout and lands after the
	// client gave up; the timeout is generous for every other request,
	// however loaded the machine.
	t.Run("PATCH slower than --request-timeout, landing later", func(t *testing.T) {
		defer back()
		p.Add(faultproxy.Fault{Match: patch, Times: 1, UntilGone: true})
		r := x.Run("upgrade", name, "v0.4.0", "--request-timeout="+faultTimeout).Fails(t, 1)
		noPanic(t, "upgrade", r)
		contains(t, "timed-out upgrade", r.Stderr, "error: upgrade provider/"+name+": ", "may have been made", "kubectl xpkg describe provider/"+name)
		eventually(t, "the held PATCH lands", func() bool { return l.packageSource(t, name) == newer })
	})

	t.Run("--atomic interrupted while its PATCH's answer is cut short", func(t *testing.T) {
		defer back()
		p.Add(faultproxy.Fault{Match: patch, Times: 1, Stall: time.Minute})
		run := x.Start("upgrade", name, "v0.4.0", "--atomic", "--wait=60s")
		eventually(t, "the PATCH lands", func() bool { return p.Count(patch) == 1 && l.packageSource(t, name) == newer })
		if err := run.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		r := run.Wait().Fails(t, 130)
		noPanic(t, "upgrade --atomic", r)
		contains(t, "interrupted atomic upgrade", r.Stderr, "rolling back to "+first, "rolled back to "+first)
		if src := l.packageSource(t, name); src != first {
			t.Errorf("after the interrupted --atomic upgrade the package points at %s", src)
		}
	})

	t.Run("--atomic whose rollback PATCH is refused twice", func(t *testing.T) {
		defer back()
		// newer cannot be unpacked; what it rolls back to installs healthy.
		l.mgr.Manage(name, pkgmanager.Behaviour{Fail: "cannot unpack package: MANIFEST_UNKNOWN", Image: newer})
		defer l.mgr.Manage(name, pkgmanager.Behaviour{})
		// The upgrade's PATCH goes through, the rollback's first two are
		// refused.
		p.Add(faultproxy.Fault{Match: patch, Skip: 1, Times: 2, Status: 500})
		r := x.Run("upgrade", name, "v0.4.0", "--atomic", "--wait=60s").Fails(t, 1)
		noPanic(t, "upgrade --atomic", r)
		contains(t, "atomic upgrade", r.Stderr, "Installed=False (UnpackingPackage: cannot unpack package: MANIFEST_UNKNOWN)",
			"the rollback failed", "trying again", "rolled back to "+first+", which is installed and healthy")
		if n := p.Count(patch); n != 4 {
			t.Errorf("%d PATCHes, want the upgrade's and three of the rollback's", n)
		}
		if src := l.packageSource(t, name); src != first {
			t.Errorf("after the rollback the package points at %s", src)
		}
	})

	// The PATCH outlives --request-timeout and lands after the client
	// gave up: --atomic follows it, sees it land, and puts it back.
	t.Run("--atomic whose PATCH lands after --request-timeout", func(t *testing.T) {
		defer back()
		p.Add(faultproxy.Fault{Match: patch, Times: 1, UntilGone: true})
		r := x.Run("upgrade", name, "v0.4.0", "--atomic", "--wait=60s", "--request-timeout="+faultTimeout).Fails(t, 1)
		noPanic(t, "upgrade --atomic", r)
		contains(t, "atomic upgrade whose PATCH got no answer", r.Stderr, "no answer to the change of provider/"+name+" (timed out)",
			"following it for up to 2m0s, to roll it back if it lands", "rolling back to "+first, "rolled back to "+first)
		if src := l.packageSource(t, name); src != first {
			t.Errorf("after the --atomic upgrade whose PATCH landed late the package points at %s", src)
		}
	})

	t.Run("DELETE refused", func(t *testing.T) {
		defer p.Clear()
		p.Add(faultproxy.Fault{Match: del, Status: 500})
		r := x.Run("uninstall", name, "--yes").Fails(t, 1)
		noPanic(t, "uninstall", r)
		contains(t, "refused uninstall", r.Stderr, "error: ", "provider/"+name)
		if !l.providerExists(t, name) {
			t.Error("a refused DELETE deleted the package")
		}
	})

	t.Run("DELETE held, interrupted", func(t *testing.T) {
		defer p.Clear()
		p.Add(faultproxy.Fault{Match: del, Hold: time.Minute})
		run := x.Start("uninstall", name, "--yes")
		eventually(t, "the DELETE is sent", func() bool { return p.Count(del) == 1 })
		if err := run.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		r := run.Wait().Fails(t, 130)
		noPanic(t, "uninstall", r)
		if !l.providerExists(t, name) {
			t.Error("the interrupted DELETE, never sent on, deleted the package")
		}
	})

	t.Run("DELETE answer cut short after it landed", func(t *testing.T) {
		// Land: the DELETE reaches the API server even when the client
		// gives up before a loaded API server has answered. IfOK: only
		// the answer of a DELETE that landed is cut short; one the API
		// server refused (409 Conflict: the package manager wrote the
		// package's status since it was read) comes whole, and the
		// uninstall reads the package again and sends another.
		p.Add(faultproxy.Fault{Match: del, Stall: time.Minute, IfOK: true, Land: true})
		r := x.Run("uninstall", name, "--yes", "--request-timeout="+faultTimeout).Fails(t, 1)
		noPanic(t, "uninstall", r)
		contains(t, "timed-out uninstall", r.Stderr, "may have been made")
		eventually(t, "the package is gone", func() bool { return !l.providerExists(t, name) })
	})
}
