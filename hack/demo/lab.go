package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// lab is what the demo runs against: the environment (cluster and
// registry) and the package manager, all under one directory.
type lab struct {
	dir, envDir string
	k8sBin      string
	out         *console
	env         *testenv.Env
	xp          *crossplane.Crossplane
}

// The entries of the demo's directory; anything else there means the
// directory is not the demo's, and it is left alone.
const (
	envSub        = "env"        // the environment (testenv)
	crossplaneSub = "crossplane" // Crossplane's logs, certificates and caches
	workSub       = "work"       // what the demo's commands write
)

// startLab brings everything up in a fresh directory. On failure it
// returns what it started, for the caller to stop, or nil when the
// directory is not the demo's to use.
func startLab(ctx context.Context, o options, out *console) (*lab, error) {
	l := &lab{dir: o.dir, envDir: filepath.Join(o.dir, envSub), k8sBin: o.k8sBin, out: out}
	fmt.Fprintf(out, "Setting up in %s: a cluster, a registry with the sample packages, and Crossplane %s.\n",
		o.dir, o.crossplane)
	if err := clearDir(o.dir, out); err != nil {
		return nil, err
	}
	log := out.indented("  ")
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	env, err := testenv.Start(sctx, testenv.Options{Dir: l.envDir, BinDir: o.k8sBin, CrossplaneVersion: o.crossplane, Log: log, Detached: o.keep})
	if err != nil {
		return l, err // Start stopped what it started
	}
	l.env = env
	if env.Registry == nil {
		return l, errors.New("the environment has no registry")
	}
	if err := l.pushSamples(log); err != nil {
		return l, err
	}
	l.xp, err = crossplane.Start(sctx, env, crossplane.Options{Version: o.crossplane, Dir: filepath.Join(o.dir, crossplaneSub), Log: log})
	if err != nil {
		return l, err
	}
	// The record of the release a cluster keeps (its Deployment), which
	// rename and the plans read; it goes with the cluster.
	if _, err := l.xp.RecordRelease(sctx); err != nil {
		return l, err
	}
	return l, os.MkdirAll(filepath.Join(o.dir, workSub), 0o755)
}

// clearDir stops the servers an earlier run left in dir (killed before its
// clean-up, or run with -keep) and empties it.
func clearDir(dir string, out *console) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !slices.Contains([]string{envSub, crossplaneSub, workSub}, e.Name()) {
			return fmt.Errorf("%s holds %s, which the demo did not write: pass another -dir", dir, e.Name())
		}
	}
	if env, err := testenv.Load(filepath.Join(dir, envSub, "env.json")); err == nil {
		if env.Running() {
			fmt.Fprintf(out, "  stopping the environment an earlier run left in %s\n", dir)
		}
		if err := env.Stop(); err != nil {
			return err
		}
	}
	return os.RemoveAll(dir)
}

func (l *lab) pushSamples(log *console) error {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return err
	}
	start := time.Now()
	reg := l.env.Registry
	refs, err := fixture.PushSamples(root, reg.Host, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password}))
	if err != nil {
		return fmt.Errorf("push the samples: %w", err)
	}
	fmt.Fprintf(log, "pushed %d sample packages in %.1fs:\n", len(refs), time.Since(start).Seconds())
	for _, line := range groupTags(refs) {
		fmt.Fprintf(log, "  %s\n", line)
	}
	return nil
}

// groupTags turns host/repo:tag references into one line per repository,
// its tags in semver order.
func groupTags(refs []string) []string {
	var repos []string
	tags := map[string][]string{}
	for _, r := range refs {
		i := strings.LastIndex(r, ":")
		if _, seen := tags[r[:i]]; !seen {
			repos = append(repos, r[:i])
		}
		tags[r[:i]] = append(tags[r[:i]], r[i+1:])
	}
	lines := make([]string, len(repos))
	for i, repo := range repos {
		slices.SortFunc(tags[repo], compareTags)
		lines[i] = repo + ": " + strings.Join(tags[repo], ", ")
	}
	return lines
}

// compareTags orders semantic versions as such, anything else by name.
func compareTags(a, b string) int {
	va, errA := semver.NewVersion(a)
	vb, errB := semver.NewVersion(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return va.Compare(vb)
}

// stop ends the package manager and, unless keep, the environment; the
// directory goes too unless keepLogs (or keep).
func (l *lab) stop(keep, keepLogs bool) {
	var errs []error
	if l.xp != nil {
		errs = append(errs, l.xp.Stop())
	}
	if l.env != nil && !keep {
		errs = append(errs, l.env.Stop())
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(l.out, "demo: clean-up: %v\n", err)
	}
	switch {
	case keep:
	case keepLogs:
		fmt.Fprintf(l.out, "\nEverything is stopped; the logs stay in %s (%s/*.log, %s/crossplane.log).\n",
			l.dir, envSub, crossplaneSub)
	default:
		if err := os.RemoveAll(l.dir); err != nil {
			fmt.Fprintf(l.out, "demo: clean-up: %v\n", err)
			return
		}
		fmt.Fprintf(l.out, "\nStopped Crossplane, the cluster and the registry; removed %s.\n", l.dir)
	}
}

func (l *lab) host() string { return l.env.Registry.Host }

// environ is the environment of the commands the demo runs: the user's,
// pointed at the lab (its kubeconfig, its registry's credentials) and with
// the plugin and the lab's kubectl first on PATH.
func (l *lab) environ(pluginDir string) []string {
	ours := map[string]string{
		"KUBECONFIG":    l.env.Kubeconfig,
		"DOCKER_CONFIG": l.env.Registry.DockerConfig,
		"PATH":          pluginDir + string(os.PathListSeparator) + l.k8sBin + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		// XPKG_REGISTRY would change what unqualified references mean.
		if _, set := ours[k]; set || k == testenv.EnvVar || k == "XPKG_REGISTRY" {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range ours {
		env = append(env, k+"="+v)
	}
	return env
}

// exports are the shell lines that point a shell at the lab, as
// `go run ./hack/devenv up` prints them.
func (l *lab) exports(pluginDir string) []string {
	return []string{
		"export KUBECONFIG=" + l.env.Kubeconfig,
		"export " + testenv.EnvVar + "=" + l.env.StateFile(),
		"export DOCKER_CONFIG=" + l.env.Registry.DockerConfig,
		"export PATH=" + pluginDir + ":" + l.k8sBin + ":$PATH",
	}
}
