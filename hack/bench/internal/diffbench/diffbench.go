// Package diffbench benchmarks `kubectl xpkg diff OLD NEW` against GNU `diff -u`
// of the same two package.yaml streams: the plugin parses both packages and
// compares them object by object, where GNU diff compares lines, which we
// take as the yardstick for reading two streams and reporting what changed.
//
// It measures two pairs: provider-aws v0.50.0 against v0.58.0 (≈200 CRDs,
// ≈7 MB each), and a synthetic pair ten times larger, made from those with
// the metadata document once and ten copies of every object, copy i in the
// API group aws<i>.crossplane.io. For each pair it writes, in a temporary
// directory, each package as a source directory (crossplane.yaml and
// objects.yaml), as the plain stream and as an .xpkg image tarball, checks
// that the plugin reads the directories, and runs
//
//	kubectl-xpkg diff OLD-DIR NEW-DIR > /dev/null
//	kubectl-xpkg diff old.xpkg new.xpkg > /dev/null   (adds gunzip)
//	diff -u old.yaml new.yaml > /dev/null
//
// several times each as separate processes, the three taking turns (see
// hack/bench/internal/measure).
// It prints the median wall time and peak RSS of each as a Markdown table,
// with the ratios of the plugin's times to GNU diff's.
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

// Run builds both pairs, measures bin on them runs times each and writes
// the table to w; it checks that the plugin's report on the synthetic pair
// is copies times the report on provider-aws.
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
	tmp, err := os.MkdirTemp("", "bench-diff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(w, "| pair | old / new stream | GNU diff -u (median) | GNU diff peak RSS | diff, directories (median) | peak RSS | directories / GNU diff | diff, .xpkg (median) | peak RSS | .xpkg / GNU diff |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var baseReport *diff.Report
	for i, p := range []pair{base, {fmt.Sprintf("synthetic %dx", copies), synthOld, synthNew}} {
		r, err := measurePair(w, filepath.Join(tmp, fmt.Sprint(i)), bin, gnu, runs, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		if baseReport == nil {
			baseReport = r
		} else if err := checkScaled(baseReport, r, copies); err != nil {
			return err
		}
	}
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

// measurePair writes a pair under dir, measures the three commands on it,
// writes its table row to w and returns the plugin's report on it. dir is
// removed afterwards.
func measurePair(w io.Writer, dir, bin, gnu string, runs int, p pair) (*diff.Report, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	from, err := writeSide(dir, "old", p.old)
	if err != nil {
		return nil, err
	}
	to, err := writeSide(dir, "new", p.new)
	if err != nil {
		return nil, err
	}
	r, err := report(bin, from, to)
	if err != nil {
		return nil, err
	}
	res, err := measure.Interleave(runs,
		measure.Command{OK: []int{1}, Bin: gnu, Args: []string{"-u", from.yaml, to.yaml}},
		measure.Command{OK: diffExits, Bin: bin, Args: []string{"diff", from.dir, to.dir}},
		measure.Command{OK: diffExits, Bin: bin, Args: []string{"diff", from.xpkg, to.xpkg}})
	if err != nil {
		return nil, err
	}
	g, d, x := res[0], res[1], res[2]
	ms := func(r measure.Result) time.Duration { return r.Wall.Round(time.Millisecond) }
	fmt.Fprintf(w, "| %s | %.1f / %.1f MB | %s | %.1f MiB | %s | %.1f MiB | %.2f | %s | %.1f MiB | %.2f |\n", p.name,
		float64(len(p.old))/1e6, float64(len(p.new))/1e6, ms(g), g.MiB(),
		ms(d), d.MiB(), d.Wall.Seconds()/g.Wall.Seconds(),
		ms(x), x.MiB(), x.Wall.Seconds()/g.Wall.Seconds())
	return r, nil
}
