// Package crossplane runs the real Crossplane package manager out of cluster
// against a test environment (pkg/testing/testenv), so that end-to-end tests
// see what a cluster would do with the packages they install: revisions,
// dependencies resolved from the registry, the Lock, health conditions.
//
// Start runs `crossplane core init` and `crossplane core start` (the binary
// hack/build-crossplane.sh builds, with the extra arguments a test run asks
// for, such as the alpha dependency upgrade flags), plus what a cluster
// would otherwise provide and the environment lacks: kube-controller-manager
// with only its garbage collector (so deleting a package cascades to its
// revisions), a stand-in for the kubelet that marks Crossplane's Deployments
// Available (so providers and functions become Healthy), and credentials for
// the environment's registry through an ImageConfig. Every server dies with
// the test binary.
//
// A cluster with a running package manager belongs to it: Crossplane
// reconciles every package in it, adds finalizers and overwrites status.
// Tests that create packages and fake their status must not share a cluster
// with it (hack/test.sh runs the packages that use this one against an
// environment of their own).
package crossplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// Namespace is where Crossplane runs packages and keeps its secrets.
const Namespace = "crossplane-system"

// Options select what Start runs.
type Options struct {
	// Version is the Crossplane release; default DefaultVersion(env).
	Version string
	// BinDir holds the crossplane binary; default DefaultBinDir(Version).
	BinDir string
	// K8sBinDir holds kube-controller-manager; default the environment's
	// kubectl directory, else testenv.DefaultBinDir().
	K8sBinDir string
	// Dir holds logs, certificates and caches; default a temporary
	// directory that Stop removes.
	Dir string
	// Args are more arguments of `crossplane core start`, as a cluster
	// admin gives them (Helm's --set args={...}), e.g.
	// --enable-dependency-version-upgrades.
	Args []string
	// Log receives progress lines.
	Log io.Writer
}

// Crossplane is a running package manager and its helpers.
type Crossplane struct {
	Env     *testenv.Env
	Version string
	// Args are the extra arguments `crossplane core start` runs with
	// (Options.Args); RecordRelease records them.
	Args []string
	// Dir holds the servers' logs: crossplane-init.log, crossplane.log,
	// kube-controller-manager.log.
	Dir string
	// RegistrySecret is the dockerconfigjson Secret in Namespace, and
	// ImageConfig the ImageConfig that hands it to Crossplane for every
	// package under the environment's registry ("" without a registry).
	RegistrySecret, ImageConfig string

	ownDir  bool
	procs   []*testenv.Process
	ports   []*testenv.Port // the servers' port reservations, held until Stop
	dyn     dynamic.Interface
	kube    kubernetes.Interface
	standIn *deploymentStandIn
}

// Start runs the package manager against env. On failure everything it
// started is stopped again.
func Start(ctx context.Context, env *testenv.Env, o Options) (*Crossplane, error) {
	o, err := o.withDefaults(env)
	if err != nil {
		return nil, err
	}
	c := &Crossplane{Env: env, Version: o.Version, Args: o.Args, Dir: o.Dir, ownDir: o.Dir == ""}
	if err := c.start(ctx, o); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Crossplane) start(ctx context.Context, o Options) error {
	if c.ownDir {
		dir, err := os.MkdirTemp("", "xpkg-crossplane-")
		if err != nil {
			return err
		}
		c.Dir = dir
	}
	if err := c.connect(); err != nil {
		return err
	}
	if err := c.initialize(ctx, o); err != nil {
		return err
	}
	// Credentials first, so that the first pull of a package already has them.
	if c.Env.Registry != nil {
		if err := c.configureRegistry(ctx, c.Env.Registry); err != nil {
			return err
		}
	}
	return c.startServers(ctx, o)
}

func (o Options) withDefaults(env *testenv.Env) (Options, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Version == "" {
		o.Version = DefaultVersion(env)
	}
	if o.BinDir == "" {
		dir, err := DefaultBinDir(o.Version)
		if err != nil {
			return o, err
		}
		o.BinDir = dir
	}
	if o.K8sBinDir == "" {
		dir, err := controllerManagerDir(env)
		if err != nil {
			return o, err
		}
		o.K8sBinDir = dir
	}
	if o.Dir != "" {
		dir, err := filepath.Abs(o.Dir)
		if err != nil {
			return o, err
		}
		o.Dir = dir
	}
	return o, nil
}

// DefaultVersion is the Crossplane release to run against env: the one
// whose CRDs it serves (hack/test.sh starts one environment per release,
// with $XPKG_CROSSPLANE_VERSION), else testenv.DefaultCrossplaneVersion.
func DefaultVersion(env *testenv.Env) string {
	if v := env.CrossplaneVersion; v != "" && v != "none" {
		return v
	}
	return testenv.DefaultCrossplaneVersion
}

// Stop ends the servers and the stand-in, newest first, removes the
// registry credentials Start created, and the directory if Start made it.
// What `crossplane core init` created (namespace, CRDs, Lock, TLS secrets)
// stays: a later Start reuses it.
func (c *Crossplane) Stop() error {
	var errs []error
	if c.standIn != nil {
		c.standIn.stop()
		c.standIn = nil
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		errs = append(errs, c.procs[i].Stop())
	}
	c.procs = nil
	for _, p := range c.ports {
		p.Release()
	}
	c.ports = nil
	if c.kube != nil && c.dyn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		errs = append(errs, c.removeRegistryConfig(ctx))
		cancel()
	}
	if c.ownDir && c.Dir != "" {
		errs = append(errs, os.RemoveAll(c.Dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop crossplane: %w", err)
	}
	return nil
}

// Logs returns the last n lines of Crossplane's log, for failure messages.
func (c *Crossplane) Logs(n int) string {
	return "crossplane's log ends:\n" + testenv.Tail(filepath.Join(c.Dir, "crossplane.log"), n)
}
