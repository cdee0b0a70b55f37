package crossplane

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// Names `crossplane core init` and `core start` agree on. The CA secret's
// name is fixed: Crossplane signs provider and function certificates with
// the CA it finds under exactly this name.
const (
	serviceAccount   = "crossplane"
	caSecret         = "crossplane-root-ca"
	serverTLSSecret  = "crossplane-tls-server"
	clientTLSSecret  = "crossplane-tls-client"
	initAttempts     = 10
	initAttemptLimit = time.Minute
	stopTimeout      = 30 * time.Second
)

// connect makes the clients the harness uses and the kubeconfig the servers
// use: the admin context alone, so that nothing depends on the current
// context of the environment's kubeconfig.
func (c *Crossplane) connect() error {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	raw, err := clientcmd.LoadFromFile(c.Env.Kubeconfig)
	if err != nil {
		return err
	}
	raw.CurrentContext = testenv.ContextAdmin
	if err := clientcmd.WriteToFile(*raw, c.kubeconfig()); err != nil {
		return err
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
	if err != nil {
		return err
	}
	return c.makeClients(cfg)
}

func (c *Crossplane) makeClients(cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 100, 200
	var err error
	if c.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	c.dyn, err = dynamic.NewForConfig(cfg)
	return err
}

func (c *Crossplane) kubeconfig() string { return filepath.Join(c.Dir, "kubeconfig") }

// initialize does once per API server what Crossplane's Helm chart and its
// init container do: the namespace, CRDs, TLS secrets, Lock and defaults.
func (c *Crossplane) initialize(ctx context.Context, o Options) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	// Crossplane reads its own ServiceAccount (the chart makes it) before it
	// builds any provider or function Deployment.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: Namespace}}
	if _, err := c.kube.CoreV1().ServiceAccounts(Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/%s: %w", Namespace, serviceAccount, err)
	}
	crds, err := testenv.CrossplaneCRDDir(ctx, o.Version)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := c.runInit(ctx, o, crds); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "crossplane core init done in %.1fs\n", time.Since(start).Seconds())
	return c.copyClientCerts(ctx)
}

// runInit runs `crossplane core init`, again while it fails only because
// the CRDs it has just applied are not served yet (it then reports `no
// matches for kind "Lock"`): bounded, so that a real failure still ends it.
func (c *Crossplane) runInit(ctx context.Context, o Options, crdDir string) error {
	bin := filepath.Join(o.BinDir, "crossplane")
	env := append(c.baseEnv(), "CRDS_PATH="+crdDir, "TLS_CA_SECRET_NAME="+caSecret)
	log := filepath.Join(c.Dir, "crossplane-init.log")
	var out []byte
	for attempt := 1; attempt <= initAttempts; attempt++ {
		actx, cancel := context.WithTimeout(ctx, initAttemptLimit)
		cmd := exec.CommandContext(actx, bin, "core", "init", "--activation=*")
		cmd.Env = env
		// Killed with the test binary, like the environment's servers.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var err error
		out, err = cmd.CombinedOutput()
		cancel()
		_ = appendFile(log, out)
		if err == nil {
			return nil
		}
		if !bytes.Contains(out, []byte("no matches for kind")) || ctx.Err() != nil {
			return fmt.Errorf("crossplane core init: %w; its output ends:\n%s", err, lastLines(out, 20))
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("crossplane core init failed %d times; its output ends:\n%s", initAttempts, lastLines(out, 20))
}

// copyClientCerts writes the client certificate init made to the directory
// `core start` reads it from (in a cluster, a mounted secret).
func (c *Crossplane) copyClientCerts(ctx context.Context) error {
	s, err := c.kube.CoreV1().Secrets(Namespace).Get(ctx, clientTLSSecret, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read the client certificate crossplane core init made: %w", err)
	}
	dir := c.clientCertsDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, key := range []string{"ca.crt", corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		if len(s.Data[key]) == 0 {
			return fmt.Errorf("secret %s/%s has no %s", Namespace, clientTLSSecret, key)
		}
		if err := os.WriteFile(filepath.Join(dir, key), s.Data[key], 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (c *Crossplane) clientCertsDir() string { return filepath.Join(c.Dir, "tls-client") }

// baseEnv is the whole environment of Crossplane's processes: nothing is
// inherited, so no proxy, docker config or kubeconfig of the machine can
// reach them; HOME and DOCKER_CONFIG point at empty directories, so that
// registry credentials can only come through the cluster.
func (c *Crossplane) baseEnv() []string {
	home := filepath.Join(c.Dir, "home")
	return []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + home,
		"DOCKER_CONFIG=" + filepath.Join(home, "docker"),
		"TMPDIR=" + os.TempDir(),
		"KUBECONFIG=" + c.kubeconfig(),
		"POD_NAMESPACE=" + Namespace,
		"POD_SERVICE_ACCOUNT=" + serviceAccount,
		"ENABLE_WEBHOOKS=false",
		"TLS_SERVER_SECRET_NAME=" + serverTLSSecret,
		"TLS_CLIENT_SECRET_NAME=" + clientTLSSecret,
	}
}

func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(b)
	return err
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
