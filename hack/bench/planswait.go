package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os/exec"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// The --wait benchmark: the plugin installs a provider and waits while
// the benchmark, as the package manager, installs it.

const (
	waitProviderName = "bench-provider-wait"
	waitProviderRepo = "bench/provider-wait"
)

// waitResult is what the --wait benchmark measured.
type waitResult struct {
	// lag is from the last definition seen Established to the plugin's
	// exit; total from the plugin's start to its exit.
	lag, total time.Duration
	// installing is how long the stand-in took from the package's
	// creation to its Healthy condition (revision, CRDs, status).
	installing time.Duration
	// reqs are the requests after the one that created the package.
	reqs map[string]int
}

// measureWait runs install --wait of a provider of n plain CRDs and plays
// the package manager's part.
func (m *planMeasurer) measureWait(ctx context.Context, meta []byte, ts []*planTemplate, n int) (waitResult, error) {
	pc := m.pc
	crds := plainProvider(ts, n, "wait")
	repo := pc.env.Registry.Host + "/" + waitProviderRepo
	ref := repo + ":" + planVersions[0]
	hex, err := push(ref, stream(meta, crds), pc.auth)
	if err != nil {
		return waitResult{}, err
	}
	est, err := watchEstablished(pc.env, "wait")
	if err != nil {
		return waitResult{}, err
	}
	defer est.stop()
	args := append([]string{"install", "provider", ref, waitProviderName, "--wait=" + m.cfg.planTimeout.String(), "-v=6"}, pc.flags()...)
	run, err := startPlugin(m.cfg.bin, args)
	if err != nil {
		return waitResult{}, err
	}
	var res waitResult
	created, err := waitCreated(ctx, pc.dyn, run.exited)
	if err == nil {
		res.installing, err = pc.installWait(ctx, created, crds, repo, revisionName(waitProviderName, hex))
	}
	var last time.Time
	if err == nil {
		log.Printf("plans, %d CRDs: --wait: the stand-in installed the provider in %s", n, res.installing.Round(time.Millisecond))
		last, err = est.wait(ctx, names(crds))
	}
	if err != nil {
		return res, run.fail(err)
	}
	select {
	case <-run.exited:
	case <-time.After(m.cfg.planTimeout + time.Minute):
		return res, run.fail(fmt.Errorf("still waiting after -plan-timeout %s", m.cfg.planTimeout))
	}
	if run.err != nil {
		return res, run.fail(fmt.Errorf("kubectl-xpkg %s: %w", strings.Join(args, " "), run.err))
	}
	res.lag, res.total = run.at.Sub(last), run.at.Sub(run.start)
	// A wait that ends before its definitions are established is wrong,
	// however fast; the times of the watch may read up to 1 s late.
	if res.lag < -time.Second {
		return res, fmt.Errorf("the plugin exited %s before the last definition was established", -res.lag)
	}
	calls := parseCalls(run.stderr.String())
	res.reqs = countRequests(afterCreate(calls))
	return res, logsCRDReads(countRequests(calls), "kubectl-xpkg install --wait")
}

// pluginRun is the plugin running in the background: exited closes when
// it has, at at with err; stderr may be read only then.
type pluginRun struct {
	c         *exec.Cmd
	stderr    bytes.Buffer
	exited    chan struct{}
	start, at time.Time
	err       error
}

func startPlugin(bin string, args []string) (*pluginRun, error) {
	r := &pluginRun{c: exec.Command(bin, args...), exited: make(chan struct{})}
	r.c.Stderr = &r.stderr
	r.start = time.Now()
	if err := r.c.Start(); err != nil {
		return nil, err
	}
	go func() { r.err = r.c.Wait(); r.at = time.Now(); close(r.exited) }()
	return r, nil
}

// fail stops the plugin, which must not outlive the environment, and
// adds the end of its stderr to err.
func (r *pluginRun) fail(err error) error {
	_ = r.c.Process.Kill()
	<-r.exited
	return fmt.Errorf("%w; the plugin's stderr:\n%s", err, lastLines(r.stderr.Bytes(), 20))
}

// waitCreated waits for the plugin to create the package, or to fail.
func waitCreated(ctx context.Context, dyn dynamic.Interface, exited <-chan struct{}) (*unstructured.Unstructured, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		u, err := dyn.Resource(providersGVR).Get(ctx, waitProviderName, metav1.GetOptions{})
		switch {
		case err == nil:
			return u, nil
		case !apierrors.IsNotFound(err):
			return nil, err
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("the plugin ended before it created provider/%s", waitProviderName)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("the plugin did not create provider/%s within 2 minutes", waitProviderName)
}

// installWait does what the package manager does for a new provider: its
// revision, the revision's CRDs, their references in the revision's
// status, its Lock entry, and the package's status, Installed and
// Healthy. It returns how long that took.
func (pc *planCluster) installWait(ctx context.Context, prov *unstructured.Unstructured, crds []planCRD, repo, rev string) (time.Duration, error) {
	start := time.Now()
	// The status names the reference the plugin wrote, as it reads it.
	ref, _, _ := unstructured.NestedString(prov.Object, "spec", "package")
	r, err := createRevision(ctx, pc.dyn, revisionsGVR, prov, rev, ref, 1)
	if err != nil {
		return 0, err
	}
	refs, err := applyCRDs(ctx, pc.dyn, crds, "wait", []metav1.OwnerReference{ownerOf(r, true)})
	if err != nil {
		return 0, err
	}
	err = runSteps([]func() error{
		func() error { return revisionStatus(ctx, pc.dyn, revisionsGVR, rev, refs) },
		func() error { return putLock(ctx, pc.dyn, lockEntry(rev, repo, planVersions[0], "Provider")) },
		func() error { return packageStatus(ctx, pc.dyn, providersGVR, waitProviderName, ref, rev) },
	})
	return time.Since(start), err
}

// afterCreate are the calls after the POST that created the package.
func afterCreate(calls []call) []call {
	for i, c := range calls {
		if _, resource, _ := splitAPIPath(c.path); c.verb == "POST" && resource == "providers" {
			return calls[i+1:]
		}
	}
	return nil
}
