package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/extractbench"
	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

const mirrorMethod = "`kubectl-xpkg mirror ROOT --to PREFIX`" + ` against ` + "`crane copy`" + ` (go-containerregistry's CLI,
built from this module's go-containerregistry) copying the same closure
image by image. Two local registries (CNCF distribution, htpasswd
authentication, on 127.0.0.1), a source and a destination, their storage
in memory (tmpfs) where there is room, so that no disk's writeback lands on
the next command; both tools read their credentials from one docker config
(DOCKER_CONFIG). The closure, pushed to the source: a configuration that depends on a function
and a provider, the provider on a family provider (dependsOn naming the
source's repositories, each semver range admitting the one tag there), four
packages, each an OCI index of linux/amd64 and linux/arm64 images. Every
image holds its package.yaml (the base layer); the function's and the
providers' hold a runtime layer of random bytes too, of their own per
platform (incompressible: stored in its gzip stream uncompressed), of 1 MiB
(function) and 5 MiB (providers) per platform in the **small** closure, 20
and 100 MiB in the **large** one. **Each size is checked first**: mirror
exits 0, says it mirrored 4 of 4 packages, every blob copied, and prints
the ImageConfigs; each of the four tags resolves at the destination (HEAD)
to the digest it has at the source (HEAD); crane's four copies likewise; a
second mirror to the same prefix says 4 already there and copies nothing.
The destination requests of that second run, and of crane copying the four
again, are counted by a reverse proxy in front of the destination. **Time
and peak RSS**: in each run mirror (default ` + "`--jobs 4`" + `) copies to a new prefix
(DST/run-SIZE-N/xpkg), then runs again to the same prefix (the second run,
where everything is there), and crane copies the four images one after the
other to another new prefix (DST/run-SIZE-N/crane/REPOSITORY:TAG), then again;
each crane copy is a process of its own: crane's time is the sum of the four,
its peak RSS the largest of the four. The two tools take turns run by run,
alternating which goes first; after each run the destination digests are
checked again.
**Goal (the issue's): mirror's time at most 1.1× the sum of crane's; peak
RSS flat in the image size (the large closure's within 5 MiB of the
small's: blobs streamed, never held whole); a second run that copies nothing
in well under a second per image (here: at most 250 ms per image).**`

// mirrorBench is the benchmark's environment: crane, the registries, a
// counting proxy in front of the destination.
type mirrorBench struct {
	cfg      *config
	crane    string
	src, dst *benchRegistry
	counter  *regCounter
	// store holds both registries' storage and logs.
	store string
}

// mirrorRow is what was measured at one size, run by run.
type mirrorRow struct {
	size         mirrorSize
	bytes        int64
	blobs        int
	mirror, noop []time.Duration
	crane, again []time.Duration // summed over the four copies
	// CPU time, user and system, of mirror and of crane's four copies.
	mirrorCPU, craneCPU []time.Duration
	// Peak RSS: the largest over the runs (crane's: over its copies).
	mirrorRSS, noopRSS, craneRSS, againRSS, floor int64
	// noopReqs and againReqs are the destination requests of one second
	// run of mirror and of crane's four copies.
	noopReqs, againReqs []string
}

func runMirror(cfg *config, r *report) error {
	r.para(mirrorMethod)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	mb, err := startMirrorBench(ctx, cfg)
	if err != nil {
		return err
	}
	defer mb.stop()
	var rows []*mirrorRow
	for _, s := range mirrorSizes {
		row, err := mb.measureSize(s)
		if err != nil {
			return fmt.Errorf("%s closure: %w", s.name, err)
		}
		rows = append(rows, row)
	}
	writeMirror(r, cfg, mb.storage(), rows)
	return nil
}

// startMirrorBench builds crane, finds room for the registries' storage,
// starts both registries and the proxy, and points DOCKER_CONFIG at
// their credentials.
func startMirrorBench(ctx context.Context, cfg *config) (*mirrorBench, error) {
	mb := &mirrorBench{cfg: cfg}
	var err error
	if mb.crane, err = extractbench.BuildCrane(cfg.tmp); err != nil {
		return nil, err
	}
	if mb.store, err = mirrorStore(cfg.tmp); err != nil {
		return nil, err
	}
	if mb.src, err = startBenchRegistry(ctx, filepath.Join(mb.store, "src")); err != nil {
		os.RemoveAll(mb.store)
		return nil, err
	}
	if mb.dst, err = startBenchRegistry(ctx, filepath.Join(mb.store, "dst")); err != nil {
		mb.src.stop()
		os.RemoveAll(mb.store)
		return nil, err
	}
	if mb.counter, err = startRegCounter(mb.dst.host); err != nil {
		mb.stop()
		return nil, err
	}
	docker := filepath.Join(cfg.tmp, "mirror-docker")
	if err := writeDockerAuths(docker, map[string]*benchRegistry{mb.src.host: mb.src, mb.dst.host: mb.dst, mb.counter.host(): mb.dst}); err != nil {
		mb.stop()
		return nil, err
	}
	os.Setenv("DOCKER_CONFIG", docker)
	return mb, nil
}

func (mb *mirrorBench) stop() {
	if mb.counter != nil {
		mb.counter.srv.Close()
	}
	mb.dst.stop()
	mb.src.stop()
	os.RemoveAll(mb.store)
}

// mirrorShm is where the registries keep their blobs when it has room
// (a tmpfs): on disk, the kernel's writeback of earlier runs' uploads
// lands on whichever command runs next, and here crane's time for the
// same copy moved from 1.3 s to 3.2 s between runs.
const mirrorShm = "/dev/shm"

// mirrorStore makes the directory of the registries' storage: in
// mirrorShm if it has room, else under tmp, which must.
func mirrorStore(tmp string) (string, error) {
	var need int64
	for _, s := range mirrorSizes {
		// Each closure at both registries, and a run's uploads, which
		// are written whole before they are found to be there already.
		need += 2 * 2 * 2 * (2*s.provider + s.function)
	}
	if free, err := freeBytes(mirrorShm); err == nil && free > 2*need {
		return os.MkdirTemp(mirrorShm, "xpkg-bench-mirror-")
	}
	free, err := freeBytes(tmp)
	if err != nil {
		return "", err
	}
	if free < need {
		return "", fmt.Errorf("%s has %s free; the mirror benchmark needs about %s", tmp, mib(free), mib(need))
	}
	return os.MkdirTemp(tmp, "mirror-")
}

// storage says where the registries kept their blobs.
func (mb *mirrorBench) storage() string {
	if strings.HasPrefix(mb.store, mirrorShm+"/") {
		return "in memory (tmpfs, " + mirrorShm + ")"
	}
	return "on disk (" + mb.store + ")"
}

func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// measureSize pushes the size's closure, checks both tools, counts the
// second runs' requests, then measures the runs.
func (mb *mirrorBench) measureSize(s mirrorSize) (*mirrorRow, error) {
	row := &mirrorRow{size: s}
	pkgs := s.closure()
	start := time.Now()
	for _, p := range pkgs {
		n, blobs, err := p.push(mb.src.host, mb.src.auth())
		if err != nil {
			return nil, err
		}
		if d, err := headDigest(p.ref(mb.src.host), mb.src.auth()); err != nil || d != p.digest {
			return nil, fmt.Errorf("%s at the source: %s (%v), pushed %s", p.ref(mb.src.host), d, err, p.digest)
		}
		row.bytes, row.blobs = row.bytes+n, row.blobs+blobs
	}
	log.Printf("mirror, %s closure: %s in %d blobs pushed in %s", s.name, mib(row.bytes), row.blobs, time.Since(start).Round(100*time.Millisecond))
	if err := mb.check(row, pkgs); err != nil {
		return nil, err
	}
	log.Printf("mirror, %s closure: checked; measuring %d runs", s.name, mb.cfg.runs)
	for i := range mb.cfg.runs {
		if err := mb.measureRun(row, pkgs, i); err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
	}
	return row, nil
}

// check runs each tool once, checked, to a prefix of its own, and once
// again through the counting proxy.
func (mb *mirrorBench) check(row *mirrorRow, pkgs []*mirrorPkg) error {
	prefix := "/check-" + row.size.name
	root := pkgs[0].ref(mb.src.host)
	if err := mb.checkMirror(root, mb.dst.host+prefix+"/xpkg", len(pkgs), row.blobs); err != nil {
		return err
	}
	if err := mb.verify(pkgs, mb.dst.host+prefix+"/xpkg"); err != nil {
		return err
	}
	mb.counter.take()
	if err := mb.checkMirror(root, mb.counter.host()+prefix+"/xpkg", 0, 0); err != nil {
		return fmt.Errorf("second run: %w", err)
	}
	row.noopReqs = mb.counter.take()
	if err := mb.craneCopies(pkgs, mb.dst.host+prefix+"/crane"); err != nil {
		return err
	}
	if err := mb.verify(pkgs, mb.dst.host+prefix+"/crane"); err != nil {
		return fmt.Errorf("crane copy: %w", err)
	}
	mb.counter.take()
	if err := mb.craneCopies(pkgs, mb.counter.host()+prefix+"/crane"); err != nil {
		return err
	}
	row.againReqs = mb.counter.take()
	return nil
}

// craneCopies copies each package with crane to its repository under
// prefix.
func (mb *mirrorBench) craneCopies(pkgs []*mirrorPkg, prefix string) error {
	for _, p := range pkgs {
		if _, _, err := cmd(mb.crane, "copy", p.ref(mb.src.host), prefix+"/"+p.repo+":"+p.tag); err != nil {
			return err
		}
	}
	return nil
}

// checkMirror runs mirror to prefix and fails unless it exits 0, prints
// the ImageConfigs and says it mirrored every package, copied of them
// with blobs blobs sent, the rest already there.
func (mb *mirrorBench) checkMirror(root, prefix string, copied, blobs int) error {
	out, stderr, err := cmd(mb.cfg.bin, "mirror", root, "--to", prefix)
	if err != nil {
		return err
	}
	n := 4
	want := []string{
		fmt.Sprintf("Mirrored %d of %d package(s) to %s, each verified there by digest: %d copied (%d blob(s), ", n, n, prefix, copied, blobs),
		fmt.Sprintf("), %d already there\n", n-copied),
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			return fmt.Errorf("mirror --to %s said %q, want %q", prefix, stderr, w)
		}
	}
	if !strings.Contains(out, "kind: ImageConfig") || !strings.Contains(out, "rewriteImage:") {
		return fmt.Errorf("mirror --to %s printed %q, want ImageConfigs", prefix, out)
	}
	return nil
}

// verify fails unless each package's tag under the prefix resolves at
// the destination to the digest it has at the source.
func (mb *mirrorBench) verify(pkgs []*mirrorPkg, prefix string) error {
	for _, p := range pkgs {
		ref := prefix + "/" + p.repo + ":" + p.tag
		got, err := headDigest(ref, mb.dst.auth())
		if err != nil {
			return err
		}
		if got != p.digest {
			return fmt.Errorf("%s is %s at the destination, %s at the source", ref, got, p.digest)
		}
	}
	return nil
}

// measureRun runs mirror twice to a new prefix and crane's four copies
// twice to another, in one turn, alternating which tool goes first, and
// checks both copies.
func (mb *mirrorBench) measureRun(row *mirrorRow, pkgs []*mirrorPkg, i int) error {
	prefix := fmt.Sprintf("%s/run-%s-%d", mb.dst.host, row.size.name, i+1)
	m := measure.Command{Bin: mb.cfg.bin, Args: []string{"mirror", pkgs[0].ref(mb.src.host), "--to", prefix + "/xpkg"}}
	mirror := []measure.Command{m, m}
	var crane []measure.Command
	for range 2 {
		for _, p := range pkgs {
			crane = append(crane, measure.Command{Bin: mb.crane, Args: []string{"copy", p.ref(mb.src.host), prefix + "/crane/" + p.repo + ":" + p.tag}})
		}
	}
	cmds := append(append([]measure.Command{}, mirror...), crane...)
	if i%2 == 1 {
		cmds = append(append([]measure.Command{}, crane...), mirror...)
	}
	res, err := measure.Interleave(1, cmds...)
	if err != nil {
		return err
	}
	if i%2 == 1 { // back to mirror's first
		res = slices.Concat(res[len(crane):], res[:len(crane)])
	}
	row.add(res[0], res[1], res[2:2+len(pkgs)], res[2+len(pkgs):])
	log.Printf("mirror, %s closure, run %d: mirror %s (again %s), crane ×%d %s (again %s)", row.size.name, i+1,
		ms(row.mirror[i]), ms(row.noop[i]), len(pkgs), ms(row.crane[i]), ms(row.again[i]))
	if err := mb.verify(pkgs, prefix+"/xpkg"); err != nil {
		return err
	}
	return mb.verify(pkgs, prefix+"/crane")
}

// add records one run: mirror's two, crane's copies and copies again.
func (row *mirrorRow) add(mirror, noop measure.Result, crane, again []measure.Result) {
	row.mirror, row.noop = append(row.mirror, mirror.Wall), append(row.noop, noop.Wall)
	row.mirrorRSS, row.noopRSS = max(row.mirrorRSS, mirror.RSS), max(row.noopRSS, noop.RSS)
	row.floor = max(row.floor, mirror.Floor, noop.Floor)
	row.mirrorCPU = append(row.mirrorCPU, mirror.CPU)
	var sum, sumAgain, cpu time.Duration
	for j := range crane {
		sum, sumAgain, cpu = sum+crane[j].Wall, sumAgain+again[j].Wall, cpu+crane[j].CPU
		row.craneRSS, row.againRSS = max(row.craneRSS, crane[j].RSS), max(row.againRSS, again[j].RSS)
		row.floor = max(row.floor, crane[j].Floor, again[j].Floor)
	}
	row.crane, row.again = append(row.crane, sum), append(row.again, sumAgain)
	row.craneCPU = append(row.craneCPU, cpu)
}
