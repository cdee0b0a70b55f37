// Command demo runs a narrated session of kubectl-xpkg (make demo): it
// brings up the local environment (kube-apiserver and etcd with Crossplane's
// CRDs, an OCI registry holding the sample packages of hack/testdata) and
// the real Crossplane package manager against it, then uses the plugin the
// way an operator would, through `kubectl xpkg`: validate, extract and diff
// packages, install a configuration with its dependencies, inspect it,
// upgrade it after its preflight, uninstall it with its dependencies.
//
// Before each command it says in one line what the step shows; after it, it
// checks that the step did what it says (exit status, key lines of output
// and, for cluster steps, the cluster's state) and prints ✔ or ✘. It exits
// non-zero when any step failed. Whatever happens, Ctrl-C included, it stops
// what it started; with -keep it leaves the cluster and registry running
// and prints the lines that point a shell at them.
//
//	go run ./hack/demo [-bin bin/kubectl-xpkg] [-dir _output/demo] [-keep]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

type options struct {
	bin    string // the plugin binary
	dir    string // everything the demo writes
	k8sBin string // kube-apiserver, etcd, kubectl, kube-controller-manager
	// crossplane is the Crossplane release the demo runs (its binary is
	// hack/build-crossplane.sh's for that release).
	crossplane string
	keep       bool
}

func main() {
	o := options{}
	flag.StringVar(&o.bin, "bin", "bin/kubectl-xpkg", "the kubectl-xpkg binary to demonstrate (make build)")
	flag.StringVar(&o.dir, "dir", "_output/demo", "directory for the environment, Crossplane's logs and the files the demo writes")
	flag.StringVar(&o.k8sBin, "k8s-bin", "", "directory with kube-apiserver, etcd, kubectl and kube-controller-manager (default: what hack/build-k8s.sh cached)")
	flag.StringVar(&o.crossplane, "crossplane-version", testenv.DefaultCrossplaneVersion, "the Crossplane release to run: v2.3.4 or v2.4.2 (CROSSPLANE_VERSION=… hack/build-crossplane.sh builds it)")
	flag.BoolVar(&o.keep, "keep", false, "leave the cluster and registry running at the end and print how to use them")
	flag.Parse()
	os.Exit(run(o))
}

func run(o options) int {
	start := time.Now()
	out := newConsole(os.Stdout)
	if err := o.resolve(); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		return 2
	}
	ctx, interrupted := interruptible(out)
	l, err := startLab(ctx, o, out)
	if err != nil {
		if interrupted() {
			err = errors.New("interrupted")
		}
		fmt.Fprintf(out, "\ndemo: could not set up the environment: %v\n", err)
		if l != nil {
			l.stop(false, !interrupted())
		}
		return exitCode(interrupted(), false)
	}
	defer func() {
		if p := recover(); p != nil {
			l.stop(false, true)
			panic(p)
		}
	}()
	s := newSession(ctx, out, l, o.bin)
	err = runJourney(s, l, o.dir)
	if err != nil {
		fmt.Fprintf(out, "\ndemo: %v\n", err)
	}
	passed := s.passed() && err == nil && !interrupted()
	keep := o.keep && !interrupted()
	l.stop(keep, !passed && !interrupted())
	closing(out, l, o, keep)
	if interrupted() {
		fmt.Fprintln(out, "\ndemo: interrupted: the steps after the last one shown did not run")
	}
	s.summary(time.Since(start))
	return exitCode(interrupted(), passed)
}

func exitCode(interrupted, passed bool) int {
	switch {
	case interrupted:
		return 130
	case passed:
		return 0
	default:
		return 1
	}
}

// resolve makes the paths absolute where the demo needs them so, and finds
// the default binaries; the demo runs in the repository's root, where the
// commands it prints work as shown.
func (o *options) resolve() error {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return err
	}
	if o.bin, err = filepath.Abs(o.bin); err != nil {
		return err
	}
	if _, err := os.Stat(o.bin); err != nil {
		return fmt.Errorf("no plugin binary at %s: run make build (or pass -bin)", o.bin)
	}
	if o.k8sBin == "" {
		if o.k8sBin, err = testenv.DefaultBinDir(); err != nil {
			return err
		}
	}
	if o.k8sBin, err = filepath.Abs(o.k8sBin); err != nil {
		return err
	}
	if o.dir, err = filepath.Abs(o.dir); err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	if rel, err := filepath.Rel(root, o.dir); err == nil && filepath.IsLocal(rel) {
		o.dir = rel // shorter in the commands shown
	}
	return nil
}

// interruptible returns a context that Ctrl-C (or SIGTERM, SIGHUP) cancels, and a
// function that says whether that happened. Later signals are absorbed,
// so that a second Ctrl-C does not cut the clean-up short.
func interruptible(out *console) (context.Context, func() bool) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for range sigs {
			if ctx.Err() == nil {
				fmt.Fprintln(out, "\ndemo: interrupted: stopping the environment")
			} else {
				fmt.Fprintln(out, "demo: still stopping the environment")
			}
			cancel()
		}
	}()
	return ctx, func() bool { return errors.Is(ctx.Err(), context.Canceled) }
}

// closing tells the reader how to get at the environment, or how to get
// one again.
func closing(out *console, l *lab, o options, kept bool) {
	plugin := filepath.Dir(o.bin)
	if kept {
		fmt.Fprintf(out, "\nThe cluster and registry keep running (Crossplane stopped with the demo: its\n"+
			"stand-in for the kubelet runs in this process, so new packages would not become\n"+
			"Healthy). Point a shell at them with:\n\n")
		for _, line := range l.exports(plugin) {
			fmt.Fprintln(out, line)
		}
		fmt.Fprintf(out, "\nPackages in the registry: %s/crossplane-contrib/<name>:<tag> and\n"+
			"%s/e2e/crossplane-contrib/<name>:<tag> (see hack/testdata).\n"+
			"Stop it with: go run ./hack/devenv down -dir %s\n", l.host(), l.host(), l.envDir)
		return
	}
	fmt.Fprintf(out, "\nTo point a shell at such an environment, run make demo DEMOFLAGS=-keep (or\n"+
		"go run ./hack/demo -keep): it leaves the cluster and registry running and prints\n"+
		"the export lines (KUBECONFIG, DOCKER_CONFIG, and PATH with the plugin and kubectl)\n"+
		"under which the commands above work as shown. make dev-env starts one as well.\n")
}
