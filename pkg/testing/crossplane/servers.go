package crossplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// startServers runs kube-controller-manager, the Deployment stand-in and
// `crossplane core start`, and waits until each is ready.
func (c *Crossplane) startServers(ctx context.Context, o Options) error {
	start := time.Now()
	if err := c.startControllerManager(ctx, o); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "kube-controller-manager (garbage collector) ready in %.1fs\n", time.Since(start).Seconds())
	sctx, cancel := context.WithCancel(context.Background())
	c.standIn = startDeploymentStandIn(sctx, cancel, c.kube, Namespace)
	start = time.Now()
	if err := c.startCore(ctx, o); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "crossplane %s ready in %.1fs (logs in %s)\n", o.Version, time.Since(start).Seconds(), c.Dir)
	return nil
}

// startCore runs `crossplane core start` with o.Args. Crossplane binds its
// metrics and health ports on every interface (it formats them as ":port"
// and has no flag for the address; ReservePort checks that a port binds
// there too); both get reserved ports, and the webhook server, which would
// also bind, stays off.
func (c *Crossplane) startCore(ctx context.Context, o Options) error {
	for _, d := range []string{"home", "tls-server", "cache/xpkg", "cache/xfn"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return err
		}
	}
	httpc := loopbackClient(nil)
	p, ports, err := testenv.StartOnPorts(3, func(ports []int) (*testenv.Process, error) {
		health := strconv.Itoa(ports[1])
		env := append(c.baseEnv(),
			"LEADER_ELECTION=false",
			"METRICS_PORT="+strconv.Itoa(ports[0]),
			"HEALTH_PROBE_PORT="+health,
			"WEBHOOK_PORT="+strconv.Itoa(ports[2]),
			"TLS_CLIENT_CERTS_DIR="+c.clientCertsDir(),
			"TLS_SERVER_CERTS_DIR="+filepath.Join(c.Dir, "tls-server"),
			"XPKG_CACHE_DIR="+filepath.Join(c.Dir, "cache", "xpkg"),
			"XFN_CACHE_DIR="+filepath.Join(c.Dir, "cache", "xfn"),
		)
		p, err := testenv.StartProcess(testenv.Command{
			Name: "crossplane", Dir: c.Dir, Bin: filepath.Join(o.BinDir, "crossplane"),
			// Without --debug Crossplane drops even its reconcile errors.
			Args: append([]string{"core", "start", "--debug"}, o.Args...), Env: env,
		})
		if err != nil {
			return nil, err
		}
		return p, p.WaitReady(ctx, testenv.StartBound, func(ctx context.Context) bool {
			return testenv.HTTPOK(ctx, httpc, "http://127.0.0.1:"+health+"/readyz")
		})
	})
	c.track(p, ports)
	return err
}

// startControllerManager runs kube-controller-manager with its garbage
// collector alone: without it nothing acts on ownerReferences, and a
// deleted package would leave its revisions behind. It serves (its health
// checks only) on loopback.
func (c *Crossplane) startControllerManager(ctx context.Context, o Options) error {
	// Its serving certificate is self-signed, made at start.
	httpc := loopbackClient(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // loopback health probe
	p, ports, err := testenv.StartOnPorts(1, func(ports []int) (*testenv.Process, error) {
		port := strconv.Itoa(ports[0])
		p, err := testenv.StartProcess(testenv.Command{
			Name: "kube-controller-manager", Dir: c.Dir,
			Bin: filepath.Join(o.K8sBinDir, "kube-controller-manager"),
			Args: []string{
				"--kubeconfig=" + c.kubeconfig(),
				"--controllers=garbage-collector-controller",
				"--leader-elect=false",
				"--bind-address=127.0.0.1",
				"--secure-port=" + port,
				"--cert-dir=" + filepath.Join(c.Dir, "kcm-certs"),
			},
			Env: []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(c.Dir, "home")},
		})
		if err != nil {
			return nil, err
		}
		return p, p.WaitReady(ctx, testenv.StartBound, func(ctx context.Context) bool {
			return testenv.HTTPOK(ctx, httpc, "https://127.0.0.1:"+port+"/healthz")
		})
	})
	c.track(p, ports)
	return err
}

// track keeps a server for Stop, and the reservations of its ports until
// it is stopped.
func (c *Crossplane) track(p *testenv.Process, ports []*testenv.Port) {
	if p != nil {
		c.procs = append(c.procs, p)
	}
	c.ports = append(c.ports, ports...)
}

// loopbackClient asks the servers here for their health, never through a
// proxy of the machine's environment.
func loopbackClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
}
