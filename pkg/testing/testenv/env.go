// Package testenv runs the project's real test environment: etcd and
// kube-apiserver with the Crossplane CRDs loaded, and an OCI registry (the CNCF
// distribution registry, built by hack/build-registry.sh) with htpasswd auth,
// all on loopback. `go run ./hack/devenv up` starts one for
// a shell or for `make test`; tests find it through $XPKG_TESTENV, or start
// their own once per test binary (see Main).
package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// EnvVar names the file that describes a running environment.
const EnvVar = "XPKG_TESTENV"

// Env describes a running environment; it is saved as <Dir>/env.json.
type Env struct {
	Dir        string `json:"dir"`
	Kubeconfig string `json:"kubeconfig"`
	APIServer  string `json:"apiServer"`
	// Kubectl is a kubectl built alongside the API server.
	Kubectl           string    `json:"kubectl,omitempty"`
	CrossplaneVersion string    `json:"crossplaneVersion,omitempty"`
	CRDDir            string    `json:"crdDir,omitempty"`
	Registry          *Registry `json:"registry,omitempty"`
	Processes         []PID     `json:"processes"`
	// StartSeconds is how long the API server took to become ready.
	StartSeconds float64 `json:"apiserverStartSeconds"`

	// ports are the servers' port reservations, held until Stop.
	ports []*Port
}

// PID records a server process so that Stop can end it from another process.
type PID struct {
	Name   string `json:"name"`
	PID    int    `json:"pid"`
	Binary string `json:"binary"`
}

// Options select what Start runs.
type Options struct {
	// Dir holds state, logs and data; it is created and must be empty.
	Dir string
	// BinDir holds kube-apiserver, etcd and kubectl (hack/build-k8s.sh).
	BinDir string
	// CrossplaneVersion selects whose CRDs are loaded; "none" loads none.
	CrossplaneVersion string
	// NoRegistry skips the registry.
	NoRegistry bool
	// RegistryBin is the registry binary; default DefaultRegistryBin().
	RegistryBin string
	// Log receives progress lines.
	Log io.Writer
	// Detached servers outlive the process that started them (devenv up);
	// otherwise they die with it, even if it is killed. The reservations
	// of their ports (see ReservePort) end with that process at the
	// latest: by then the servers are ready, listening on the ports, and a
	// port in use is never drawn, so holding them until then is enough.
	Detached bool
}

// Start brings up the environment. On failure everything it started is
// stopped again.
func Start(ctx context.Context, o Options) (env *Env, err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.CrossplaneVersion == "" {
		o.CrossplaneVersion = DefaultCrossplaneVersion
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	env = &Env{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig")}
	defer func() {
		if err != nil {
			_ = env.Stop()
		}
	}()
	if err := env.startCluster(ctx, o); err != nil {
		return env, err
	}
	if o.CrossplaneVersion != "none" {
		if err := env.loadCrossplaneCRDs(ctx, o); err != nil {
			return env, err
		}
	}
	if !o.NoRegistry {
		bin := o.RegistryBin
		if bin == "" {
			if bin, err = DefaultRegistryBin(); err != nil {
				return env, err
			}
		}
		p, ports, reg, err := startRegistry(ctx, dir, bin, o.Detached)
		env.track(p, bin, ports)
		if err != nil {
			return env, err
		}
		env.Registry = reg
		fmt.Fprintf(o.Log, "registry ready at %s (user %s)\n", reg.Host, reg.Username)
	}
	return env, env.save()
}

func (e *Env) startCluster(ctx context.Context, o Options) error {
	bins := map[string]string{}
	for _, name := range []string{"etcd", "kube-apiserver", "kubectl"} {
		bins[name] = filepath.Join(o.BinDir, name)
		if _, err := os.Stat(bins[name]); err != nil {
			return fmt.Errorf("%s missing in %q: run hack/build-k8s.sh", name, o.BinDir)
		}
	}
	e.Kubectl = bins["kubectl"]
	p, ports, etcdURL, err := startEtcd(ctx, e.Dir, bins["etcd"], o.Detached)
	e.track(p, bins["etcd"], ports)
	if err != nil {
		return err
	}
	files, err := writeAPIServerFiles(e.Dir)
	if err != nil {
		return err
	}
	start := time.Now()
	p, ports, url, err := startAPIServer(ctx, e.Dir, bins["kube-apiserver"], etcdURL, files, o.Detached)
	e.track(p, bins["kube-apiserver"], ports)
	if err != nil {
		return err
	}
	e.StartSeconds = time.Since(start).Seconds()
	e.APIServer = url
	fmt.Fprintf(o.Log, "kube-apiserver ready at %s in %.1fs\n", url, e.StartSeconds)
	return writeKubeconfig(e.Kubeconfig, url, files)
}

func (e *Env) loadCrossplaneCRDs(ctx context.Context, o Options) error {
	dir, err := CrossplaneCRDDir(ctx, o.CrossplaneVersion)
	if err != nil {
		return err
	}
	crds, err := ReadCRDs(dir)
	if err != nil {
		return err
	}
	dc, err := e.DynamicClient(ContextAdmin)
	if err != nil {
		return err
	}
	if err := ApplyCRDs(ctx, dc, crds); err != nil {
		return err
	}
	e.CrossplaneVersion, e.CRDDir = o.CrossplaneVersion, dir
	fmt.Fprintf(o.Log, "loaded %d CRDs of Crossplane %s\n", len(crds), o.CrossplaneVersion)
	return nil
}

// track records a server and keeps the reservations of its ports until Stop
// (RestartAPIServer starts the API server again on its port).
func (e *Env) track(p *process, bin string, ports []*Port) {
	e.ports = append(e.ports, ports...)
	if p != nil {
		e.Processes = append(e.Processes, PID{Name: p.name, PID: p.pid, Binary: bin})
	}
}

// DynamicClient is a client for the environment's API server as the user of
// the given context.
func (e *Env) DynamicClient(context string) (dynamic.Interface, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: e.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, err
	}
	// Loading CRDs polls each one until it is established: lift client-go's
	// default client-side rate limit, meant for controllers.
	cfg.QPS, cfg.Burst = 200, 400
	return dynamic.NewForConfig(cfg)
}

// Stop ends every process of the environment, newest first, and releases
// the reservations of their ports.
func (e *Env) Stop() error {
	var errs []error
	for i := len(e.Processes) - 1; i >= 0; i-- {
		p := e.Processes[i]
		errs = append(errs, stopPID(p.PID, p.Binary))
	}
	releasePorts(e.ports)
	e.ports = nil
	return errors.Join(errs...)
}

func (e *Env) save() error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.Dir, "env.json"), b, 0o600)
}

// StateFile is where Start saved the description of the environment.
func (e *Env) StateFile() string { return filepath.Join(e.Dir, "env.json") }

// Load reads an environment description saved by Start.
func Load(path string) (*Env, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	e := &Env{}
	if err := json.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// Running reports whether every process of the environment is still up.
func (e *Env) Running() bool {
	if len(e.Processes) == 0 {
		return false
	}
	for _, p := range e.Processes {
		if !alive(p.PID) {
			return false
		}
	}
	return true
}
