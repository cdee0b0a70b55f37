package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/hostile"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// Bounds every command run on a hostile package must stay within. The
// time bound catches hangs: the cases that cost time in proportion to
// their size run with limits that keep them short, and extract -o DIR/
// of the document flood writes 100000 files first, which a busy disk
// makes slow.
const (
	hostileMaxRSS  = 512 << 10 // KiB
	hostileMaxTime = time.Minute
)

// TestHostilePackages runs every package of the hostile corpus through
// extract -o DIR/, validate, diff against a good package, and install's
// kind detection, from the real registry. Each verb must refuse the package
// with a non-zero exit and stderr ending in one error line that names the
// problem (validate: its exit code and report), write nothing outside its
// target, and stay within the bounds above. Packages that break only
// content rules are refused by validate alone (and by install when it
// cannot learn their kind): extract and diff read them (see hostile.Outcome).
// A corrupt blob cannot be uploaded (the registry checks digests), so that
// case is served through a proxy that flips a byte, and read from an OCI
// layout with the byte flipped on disk too; install takes only registry
// references, so it does not run on the layout.
func TestHostilePackages(t *testing.T) {
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	start := time.Now()
	corpus, err := hostile.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	good, _ := pushSample(t, env, "provider-nop", "v0.4.0")
	proxy, err := faultproxy.Start(reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	auth := remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})
	refs := make([]string, len(corpus))
	for i, c := range corpus {
		refs[i] = reg.Host + "/hostile/" + c.Name + ":v1"
		if err := fixture.Push(refs[i], c.Artifact, auth); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("built and pushed %d hostile packages in %s", len(corpus), time.Since(start).Round(time.Millisecond))

	stats := &hostileStats{floorKiB: resetPeakRSS(t)}
	t.Cleanup(func() { stats.log(t) })
	for i, c := range corpus {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			h := &hostileRun{c: c, good: good, stats: stats,
				x: clitest.New(t).WithEnv(env).WithLogin(proxy.Host, reg.Username, reg.Password)}
			if c.CorruptBlob.Hex == "" {
				h.verbs(t, "registry", refs[i])
				return
			}
			proxy.Add(faultproxy.Fault{Match: "/blobs/" + c.CorruptBlob.String(), Corrupt: true})
			t.Run("registry", func(t *testing.T) { h.verbs(t, "registry", strings.Replace(refs[i], reg.Host, proxy.Host, 1)) })
			t.Run("oci-layout", func(t *testing.T) { h.verbs(t, "oci-layout", corruptLayout(t, c)) })
		})
	}
}

// resetPeakRSS lowers this process's peak RSS to what it holds now and
// returns the peak RSS a trivial command then shows. A command's peak RSS
// counts its parent's at the time it started (Go starts commands with
// vfork, and Linux carries the peak of the memory a process leaves behind
// at exec into its own), so without this every command would show the
// peak of the test process, corpus and pushes included.
func resetPeakRSS(t *testing.T) int64 {
	t.Helper()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset the test's peak RSS (%v): peaks include the test process's", err)
	}
	return clitest.New(t).Run("version", "--client").Succeeds(t).MaxRSSKiB
}

// hostileRun runs one case's verbs in one user's session.
type hostileRun struct {
	c     hostile.Case
	x     *clitest.Test
	good  string
	stats *hostileStats
}

func (h *hostileRun) verbs(t *testing.T, form, src string) {
	t.Run("extract", func(t *testing.T) { h.extract(t, form, src) })
	t.Run("validate", func(t *testing.T) { h.validate(t, form, src) })
	t.Run("diff", func(t *testing.T) { h.diff(t, form, src) })
	if form == "registry" {
		t.Run("install", func(t *testing.T) { h.install(t, form, src) })
	}
}

// run runs the plugin within the bounds, recording what it took.
func (h *hostileRun) run(t *testing.T, form, verb string, args ...string) *clitest.Result {
	t.Helper()
	start := time.Now()
	r := h.x.Run(append(args, h.c.Flags...)...)
	took := time.Since(start)
	h.stats.add(hostileStat{h.c.Name, form, verb, r.ExitCode, r.MaxRSSKiB, took, saying(r, h.c.Want)})
	if r.MaxRSSKiB >= hostileMaxRSS {
		t.Errorf("%s: peak RSS %d MiB, over the bound of %d MiB", verb, r.MaxRSSKiB>>10, hostileMaxRSS>>10)
	}
	if took > hostileMaxTime {
		t.Errorf("%s: took %s, over the bound of %s", verb, took.Round(time.Millisecond), hostileMaxTime)
	}
	return r
}

// refuses checks a refusal: the exit code, and stderr ending in the one
// error line, which names the problem.
func (h *hostileRun) refuses(t *testing.T, r *clitest.Result, code int) {
	t.Helper()
	var errs []string
	for line := range strings.Lines(r.Stderr) {
		if strings.HasPrefix(line, "error: ") {
			errs = append(errs, line)
		}
	}
	last := strings.TrimSpace(r.Stderr)
	last = last[strings.LastIndex(last, "\n")+1:]
	switch {
	case r.ExitCode != code:
		t.Errorf("exit %d, want %d\nstdout: %.500s\nstderr: %.2000s", r.ExitCode, code, r.Stdout, r.Stderr)
	case len(errs) != 1 || !strings.HasPrefix(last, "error: "):
		t.Errorf("stderr does not end in one error line:\n%.2000s", r.Stderr)
	case !strings.Contains(last, h.c.Want):
		t.Errorf("error does not say %q:\n%s", h.c.Want, last)
	}
}

func (h *hostileRun) extract(t *testing.T, form, src string) {
	parent := t.TempDir()
	target := filepath.Join(parent, "out")
	home := tree(t, h.x.Home())
	r := h.run(t, form, "extract", "extract", src, "-o", target+"/")
	if h.c.Outcome == hostile.BreaksRules {
		// extract does not judge content: it writes the objects, each in a
		// file of its own directly inside the target.
		if r.ExitCode != 0 {
			t.Errorf("exit %d, want 0: extract writes packages that break content rules\n%s", r.ExitCode, r.Stderr)
		}
		if got := tree(t, parent); len(got) == 0 || slices.ContainsFunc(got, func(p string) bool { return p != "out" && filepath.Dir(p) != "out" }) {
			t.Errorf("extract wrote %v, want only files directly inside out/", got)
		}
	} else {
		h.refuses(t, r, 1)
		if got := tree(t, parent); len(got) > 0 {
			t.Errorf("a failed extract left %v in the target's directory", got)
		}
	}
	if got := tree(t, h.x.Home()); !slices.Equal(got, home) {
		t.Errorf("extract changed the working directory: %v, was %v", got, home)
	}
	noEscapee(t, parent, h.x.Home())
	if h.c.Outcome == hostile.Unreadable && !h.c.InDocuments {
		// To stdout (extract REF | kubectl apply -f -), the raw stream
		// (its documents are not parsed): a layer it refuses puts not a
		// byte there, whatever part of it breaks (a second package.yaml,
		// a truncated stream).
		r := h.run(t, form, "extract to stdout", "extract", src)
		h.refuses(t, r, 1)
		if r.Stdout != "" {
			t.Errorf("extract to stdout of a package it refuses wrote %d bytes to stdout first", len(r.Stdout))
		}
	}
}

func (h *hostileRun) validate(t *testing.T, form, src string) {
	r := h.run(t, form, "validate", "validate", src)
	summary, line, code := "0 valid, 1 invalid", src+": invalid", exit.ValidateInvalid
	if h.c.Outcome == hostile.Unreadable {
		summary, line, code = "0 invalid, 1 unreadable", src+": cannot read: ", exit.ValidateUnreadable
	}
	switch {
	case r.ExitCode != code:
		t.Errorf("exit %d, want %d\n%.2000s%s", r.ExitCode, code, r.Stdout, r.Stderr)
	case !strings.Contains(r.Stdout, line) || !strings.Contains(r.Stdout, h.c.Want) || !strings.Contains(r.Stdout, summary):
		t.Errorf("report lacks %q, %q or %q:\n%.2000s", line, h.c.Want, summary, r.Stdout)
	case h.c.Outcome == hostile.Malformed && !strings.Contains(r.Stdout, "[yaml-stream]"):
		t.Errorf("report does not name the yaml-stream rule:\n%.2000s", r.Stdout)
	case strings.Contains(r.Stdout, ": invalid : "):
		t.Errorf("report's heading has a gap where the package's kind would be:\n%.2000s", r.Stdout)
	case strings.Contains(r.Stderr, "error:"):
		t.Errorf("validate reports in its report, not on stderr:\n%s", r.Stderr)
	}
}

func (h *hostileRun) diff(t *testing.T, form, src string) {
	r := h.run(t, form, "diff", "diff", src, h.good)
	if h.c.Outcome == hostile.BreaksRules {
		// diff does not judge content either: it compares.
		if r.ExitCode != exit.DiffDifferent && r.ExitCode != exit.DiffBreaking {
			t.Errorf("exit %d, want 1 or 3: diff compares packages that break content rules\n%.2000s", r.ExitCode, r.Stderr)
		}
		return
	}
	h.refuses(t, r, exit.DiffTrouble)
}

func (h *hostileRun) install(t *testing.T, form, src string) {
	r := h.run(t, form, "install", "install", src, "--dry-run=client", "-o", "yaml")
	if h.c.KindKnown {
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "kind: Provider\n") {
			t.Errorf("exit %d, want a Provider: its meta object is fine\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
		}
		return
	}
	h.refuses(t, r, 1)
}

// corruptLayout writes the case as an OCI layout and flips a byte of its
// corrupt blob on disk.
func corruptLayout(t *testing.T, c hostile.Case) string {
	t.Helper()
	dir := t.TempDir()
	if err := fixture.WriteLayout(dir, c.Artifact); err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(dir, "blobs", c.CorruptBlob.Algorithm, c.CorruptBlob.Hex)
	b, err := os.ReadFile(blob)
	if err == nil {
		hostile.Flip(b)
		err = os.WriteFile(blob, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// tree lists the paths under dir, relative to it, in order; kubectl's
// discovery cache is left out.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == filepath.Join(".kube", "cache") {
			return filepath.SkipDir
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// noEscapee checks that no entry aimed outside the package landed where it
// aimed: beside or above the directories the command worked in.
func noEscapee(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range append(dirs, os.TempDir(), "/tmp") {
		for ; ; d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(d, hostile.Escapee)); err == nil {
				t.Errorf("%s was written outside the package", filepath.Join(d, hostile.Escapee))
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
}

// hostileStat is what one command took.
type hostileStat struct {
	name, form, verb string
	exit             int
	rssKiB           int64
	took             time.Duration
	says             string
}

// saying is the line of a command's output that names want, else its last
// line on stderr.
func saying(r *clitest.Result, want string) string {
	last := ""
	for line := range strings.Lines(r.Stdout + r.Stderr) {
		if line = strings.TrimSpace(line); strings.Contains(line, want) {
			return line
		}
		if line != "" {
			last = line
		}
	}
	return last
}

type hostileStats struct {
	floorKiB int64 // what a trivial command shows
	mu       sync.Mutex
	all      []hostileStat
}

func (s *hostileStats) add(st hostileStat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, st)
}

// log prints one line per case: each verb's exit code, peak RSS and time.
func (s *hostileStats) log(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.SortStableFunc(s.all, func(a, b hostileStat) int { return strings.Compare(a.name+a.form, b.name+b.form) })
	var b strings.Builder
	var peak int64
	for i, st := range s.all {
		if i == 0 || st.name+st.form != s.all[i-1].name+s.all[i-1].form {
			fmt.Fprintf(&b, "\n%-30s %-10s", st.name, st.form)
		}
		fmt.Fprintf(&b, "  %s=%d %3dMiB %5.1fs", st.verb, st.exit, st.rssKiB>>10, st.took.Seconds())
		peak = max(peak, st.rssKiB)
	}
	for _, st := range s.all {
		fmt.Fprintf(&b, "\n%s %s %s: %.300s", st.name, st.form, st.verb, st.says)
	}
	t.Logf("hostile corpus: %d commands, peak RSS %d MiB; `version --client` shows %d MiB (exit code, peak RSS, time):%s",
		len(s.all), peak>>10, s.floorKiB>>10, b.String())
}
