package testenv

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RestartAPIServer stops the environment's kube-apiserver and starts it
// again with the same flags (on the same port, against the same etcd),
// returning once it is ready: for tests of clients that must survive an
// API server restart. down is how long it stays stopped.
func (e *Env) RestartAPIServer(ctx context.Context, down time.Duration) error {
	start, err := e.StopAPIServer()
	if err != nil {
		return err
	}
	time.Sleep(down)
	return start(ctx)
}

// StopAPIServer stops the environment's kube-apiserver; start starts it
// again with the same flags and returns once it is ready.
func (e *Env) StopAPIServer() (start func(context.Context) error, err error) {
	i := slices.IndexFunc(e.Processes, func(p PID) bool { return p.Name == "kube-apiserver" })
	if i < 0 {
		return nil, fmt.Errorf("the environment runs no kube-apiserver")
	}
	old := e.Processes[i]
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(old.PID) + "/cmdline")
	if err != nil {
		return nil, fmt.Errorf("read the API server's flags: %w", err)
	}
	args := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0})[1:]
	flags := make([]string, len(args))
	for j, a := range args {
		flags[j] = string(a)
	}
	if err := stopPID(old.PID, old.Binary); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		p, err := startProcess(e.Dir, "kube-apiserver", old.Binary, flags, false)
		if err != nil {
			return err
		}
		e.Processes[i].PID = p.pid
		client, err := e.adminHTTP()
		if err != nil {
			return err
		}
		return p.waitReady(ctx, StartBound, func(ctx context.Context) bool {
			return httpOK(ctx, client, e.APIServer+"/readyz")
		})
	}, nil
}

func (e *Env) adminHTTP() (*http.Client, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: e.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: ContextAdmin}).ClientConfig()
	if err != nil {
		return nil, err
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	c.Timeout = 2 * time.Second
	return c, nil
}
