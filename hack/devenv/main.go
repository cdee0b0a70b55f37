// Command devenv starts and stops the local test environment: kube-apiserver
// and etcd with Crossplane's CRDs, and an OCI registry with htpasswd auth,
// all on loopback. The Makefile's dev-env and test targets call it.
//
//	go run ./hack/devenv up   [-dir D] [-bin B] [-crossplane-version V] [-push-samples]
//	go run ./hack/devenv push [-dir D] SOURCE_DIR REPOSITORY:TAG
//	go run ./hack/devenv down [-dir D]
//
// push builds an xpkg from a package source directory (crossplane.yaml plus
// YAML objects) and pushes it to the environment's registry; a REPOSITORY
// without a registry host goes to that registry.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "devenv: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: devenv up|push|down [flags]")
	}
	fs := flag.NewFlagSet("devenv "+args[0], flag.ContinueOnError)
	dir := fs.String("dir", "_output/devenv", "state directory of the environment")
	bin := fs.String("bin", "", "directory with kube-apiserver, etcd and kubectl (default: hack/bin/k8s-*)")
	defVersion := testenv.DefaultCrossplaneVersion
	if v := os.Getenv("XPKG_CROSSPLANE_VERSION"); v != "" {
		defVersion = v
	}
	xpVersion := fs.String("crossplane-version", defVersion, `Crossplane release whose CRDs to load ("none" for none; default $XPKG_CROSSPLANE_VERSION)`)
	push := fs.Bool("push-samples", false, "push the sample packages of hack/testdata to the registry")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "up":
		return up(*dir, *bin, *xpVersion, *push, stdout, stderr)
	case "push":
		if fs.NArg() != 2 {
			return errors.New("usage: devenv push [-dir D] SOURCE_DIR REPOSITORY:TAG")
		}
		return pushDir(*dir, fs.Arg(0), fs.Arg(1), stdout)
	case "down":
		return down(*dir, stderr)
	default:
		return fmt.Errorf("unknown command %q: use up, push or down", args[0])
	}
}

func up(dir, bin, xpVersion string, push bool, stdout, stderr io.Writer) error {
	state := filepath.Join(dir, "env.json")
	if env, err := testenv.Load(state); err == nil {
		if env.Running() {
			fmt.Fprintf(stderr, "devenv: already running (state in %s)\n", state)
			printExports(stdout, env)
			return nil
		}
		_ = env.Stop()
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if bin == "" {
		var err error
		if bin, err = testenv.DefaultBinDir(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := testenv.Start(ctx, testenv.Options{Dir: dir, BinDir: bin, CrossplaneVersion: xpVersion, Log: stderr, Detached: true})
	if err != nil {
		return err
	}
	if push && env.Registry != nil {
		if err := pushSamples(env, stderr); err != nil {
			_ = env.Stop()
			return err
		}
	}
	printExports(stdout, env)
	return nil
}

func pushSamples(env *testenv.Env, stderr io.Writer) error {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return err
	}
	start := time.Now()
	refs, err := fixture.PushSamples(root, env.Registry.Host, registryAuth(env))
	if err != nil {
		return err
	}
	for _, r := range refs {
		fmt.Fprintf(stderr, "pushed %s\n", r)
	}
	fmt.Fprintf(stderr, "pushed %d sample packages in %.1fs\n", len(refs), time.Since(start).Seconds())
	return nil
}

func registryAuth(env *testenv.Env) remote.Option {
	return remote.WithAuth(&authn.Basic{Username: env.Registry.Username, Password: env.Registry.Password})
}

func pushDir(dir, src, ref string, stdout io.Writer) error {
	env, err := testenv.Load(filepath.Join(dir, "env.json"))
	if err != nil {
		return fmt.Errorf("no environment in %s (run devenv up): %w", dir, err)
	}
	if env.Registry == nil {
		return errors.New("the environment has no registry")
	}
	if first, _, _ := strings.Cut(ref, "/"); !strings.ContainsAny(first, ".:") && first != "localhost" {
		ref = env.Registry.Host + "/" + ref
	}
	stream, err := fixture.Stream(src)
	if err != nil {
		return err
	}
	img, err := fixture.Image(stream)
	if err != nil {
		return err
	}
	if err := fixture.Push(ref, img, registryAuth(env)); err != nil {
		return err
	}
	fmt.Fprintln(stdout, ref)
	return nil
}

func down(dir string, stderr io.Writer) error {
	env, err := testenv.Load(filepath.Join(dir, "env.json"))
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(stderr, "devenv: nothing running in", dir)
		return nil
	}
	if err != nil {
		return err
	}
	if err := env.Stop(); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "devenv: stopped")
	return os.RemoveAll(dir)
}

func printExports(w io.Writer, env *testenv.Env) {
	fmt.Fprintf(w, "export KUBECONFIG=%s\n", env.Kubeconfig)
	fmt.Fprintf(w, "export %s=%s\n", testenv.EnvVar, env.StateFile())
	if env.Registry != nil {
		fmt.Fprintf(w, "export DOCKER_CONFIG=%s\n", env.Registry.DockerConfig)
		fmt.Fprintf(w, "# registry: %s (user %s)\n", env.Registry.Host, env.Registry.Username)
	}
}
