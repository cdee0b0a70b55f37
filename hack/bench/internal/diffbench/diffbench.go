// Package diffbench benchmarks `kubectl xpkg diff OLD NEW` against GNU `diff -u`
// of the same two package.yaml streams: the plugin parses both packages and
// compares them object by object, where GNU diff compares lines, which we
// take as the yardstick for reading two streams and reporting what changed;
// and `kubectl xpkg validate` of the new package of each pair.
//
// It measures three pairs: provider-aws v0.50.0 against v0.58.0 (≈200 CRDs,
// ≈7 MB each); a synthetic pair ten times larger, made from those with the
// metadata document once and ten copies of every object, copy i in the API
// group aws<i>.crossplane.io; and a generated pair of 2,000 CRDs (≈100 MB
// each), provider-aws's 100 largest CRDs twenty times over, renamed alike,
// v0.50.0's against v0.58.0's. For each pair it writes, in a temporary
// directory, each package as an extracted package (a directory holding
// package.yaml), as a source directory (crossplane.yaml and a file per
// object) and as an .xpkg image tarball, checks that the plugin reads the
// source directories, and runs
//
//	diff -u old/package.yaml new/package.yaml > /dev/null
//	kubectl-xpkg diff old/ new/ > /dev/null            (package.yaml)
//	kubectl-xpkg diff OLD-DIR NEW-DIR > /dev/null      (a file per object)
//	kubectl-xpkg diff old.xpkg new.xpkg > /dev/null    (adds gunzip)
//	kubectl-xpkg validate new/ > /dev/null
//
// several times each as separate processes, taking turns (see
// hack/bench/internal/measure). It prints the median wall time and peak
// RSS of each as Markdown tables, with the ratios.
package diffbench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// copies is how many times larger the synthetic pair is.
const copies = 10

// Run builds the pairs, measures bin on them runs times each and writes
// the tables to w; it checks that the plugin's report on the synthetic
// pair is copies times the report on provider-aws.
func Run(bin string, runs int, w io.Writer) error {
	gnu, err := gnuDiff()
	if err != nil {
		return err
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	base, err := providerAWS()
	if err != nil {
		return err
	}
	synthOld, err := synthetic(base.old, copies)
	if err != nil {
		return err
	}
	synthNew, err := synthetic(base.new, copies)
	if err != nil {
		return err
	}
	gen, err := generated(base.old, base.new)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bench-diff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var rows []row
	var baseReport *diff.Report
	for i, p := range []pair{base, {fmt.Sprintf("synthetic %dx", copies), synthOld, synthNew}, gen} {
		r, m, err := measurePair(filepath.Join(tmp, fmt.Sprint(i)), bin, gnu, runs, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		switch i {
		case 0:
			baseReport = r
		case 1:
			if err := checkScaled(baseReport, r, copies); err != nil {
				return err
			}
		}
		rows = append(rows, m)
	}
	writeTables(w, rows)
	return nil
}

// gnuDiff finds GNU diff on PATH.
func gnuDiff() (string, error) {
	path, err := exec.LookPath("diff")
	if err != nil {
		return "", fmt.Errorf("GNU diff is not on PATH (install diffutils): %w", err)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil || !bytes.Contains(out, []byte("GNU diffutils")) {
		return "", fmt.Errorf("%s is not GNU diff (diff --version does not name GNU diffutils): install diffutils", path)
	}
	return path, nil
}

// providerAWS is the package streams of provider-aws v0.50.0 and v0.58.0.
func providerAWS() (pair, error) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return pair{}, err
	}
	dir := filepath.Join(root, "hack/testdata/packages/provider-aws")
	v50, err := source.DirStream(filepath.Join(dir, "v0.50.0"))
	if err != nil {
		return pair{}, err
	}
	v58, err := source.DirStream(filepath.Join(dir, "v0.58.0"))
	return pair{"provider-aws v0.50.0..v0.58.0", v50, v58}, err
}

// row is what was measured on one pair.
type row struct {
	p                          pair
	files                      int
	gnu, stream, dir, xpkg, va measure.Result
}

// measurePair writes a pair under dir, measures the commands on it and
// returns the plugin's report on it with the measures. dir is removed
// afterwards.
func measurePair(dir, bin, gnu string, runs int, p pair) (*diff.Report, row, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, row{}, err
	}
	defer os.RemoveAll(dir)
	from, err := writeSide(dir, "old", p.old)
	if err != nil {
		return nil, row{}, err
	}
	to, err := writeSide(dir, "new", p.new)
	if err != nil {
		return nil, row{}, err
	}
	r, err := report(bin, from, to)
	if err != nil {
		return nil, row{}, err
	}
	res, err := measure.Interleave(runs,
		measure.Command{OK: []int{1}, Bin: gnu, Args: []string{"-u", from.yaml, to.yaml}},
		measure.Command{OK: diffExits, Bin: bin, Args: []string{"diff", from.stream, to.stream}},
		measure.Command{OK: diffExits, Bin: bin, Args: []string{"diff", from.dir, to.dir}},
		measure.Command{OK: diffExits, Bin: bin, Args: []string{"diff", from.xpkg, to.xpkg}},
		measure.Command{Bin: bin, Args: []string{"validate", to.stream}})
	if err != nil {
		return nil, row{}, err
	}
	return r, row{p: p, files: from.files, gnu: res[0], stream: res[1], dir: res[2], xpkg: res[3], va: res[4]}, nil
}

// writeTables writes the time and memory tables, and validate's.
func writeTables(w io.Writer, rows []row) {
	ms := func(r measure.Result) time.Duration { return r.Wall.Round(time.Millisecond) }
	t := func(a, b measure.Result) float64 { return a.Wall.Seconds() / b.Wall.Seconds() }
	m := func(a, b measure.Result) float64 { return a.MiB() / b.MiB() }
	fmt.Fprintf(w, "Time (median). **Goals: diff of package.yaml / GNU diff at most 2.00; source directories / package.yaml at most 1.00.**\n\n")
	fmt.Fprintf(w, "| pair | old / new stream | GNU diff -u | diff, package.yaml | **/ GNU diff** | diff, source directories | **/ package.yaml** | diff, .xpkg | / GNU diff |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.1f / %.1f MB | %s | %s | %.2f | %s (%d files each) | %.2f | %s | %.2f |\n", r.p.name,
			float64(len(r.p.old))/1e6, float64(len(r.p.new))/1e6, ms(r.gnu),
			ms(r.stream), t(r.stream, r.gnu), ms(r.dir), r.files, t(r.dir, r.stream), ms(r.xpkg), t(r.xpkg, r.gnu))
	}
	fmt.Fprintf(w, "\nPeak RSS. **Goals: diff of package.yaml / GNU diff at most 0.50, and flat as the packages grow; source directories / package.yaml at most 1.00.**\n\n")
	fmt.Fprintf(w, "| pair | GNU diff -u | diff, package.yaml | **/ GNU diff** | diff, source directories | **/ package.yaml** | diff, .xpkg | / GNU diff |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.1f MiB | %.1f MiB | %.2f | %.1f MiB | %.2f | %.1f MiB | %.2f |\n", r.p.name,
			r.gnu.MiB(), r.stream.MiB(), m(r.stream, r.gnu), r.dir.MiB(), m(r.dir, r.stream), r.xpkg.MiB(), m(r.xpkg, r.gnu))
	}
	fmt.Fprintf(w, "\n`kubectl-xpkg validate` of each pair's new package (package.yaml). **Goal: peak RSS flat in package size.**\n\n")
	fmt.Fprintf(w, "| package | stream | validate (median) | peak RSS |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s, new | %.1f MB | %s | %.1f MiB |\n", r.p.name, float64(len(r.p.new))/1e6, ms(r.va), r.va.MiB())
	}
}
