package diffbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// side is where one package of a pair is written, in each form measured.
type side struct {
	stream string // an extracted package: a directory holding package.yaml
	dir    string // package source directory: crossplane.yaml and a file per object
	yaml   string // the whole stream, for GNU diff
	xpkg   string // image tarball
	files  int    // files in dir
}

// writeSide writes a stream in the four forms under root, named label,
// and checks that the source directory reads back as the same stream.
func writeSide(root, label string, stream []byte) (side, error) {
	s := side{
		stream: filepath.Join(root, label+"-stream"),
		dir:    filepath.Join(root, label),
		yaml:   filepath.Join(root, label+"-stream", source.StreamFile),
		xpkg:   filepath.Join(root, label+".xpkg"),
	}
	meta, objects, err := metaAndObjects(stream)
	if err != nil {
		return side{}, err
	}
	for _, d := range []string{s.dir, s.stream} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return side{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, source.MetaFile), meta, 0o644); err != nil {
		return side{}, err
	}
	for i, o := range objects {
		if err := os.WriteFile(filepath.Join(s.dir, fmt.Sprintf("object-%05d.yaml", i)), o, 0o644); err != nil {
			return side{}, err
		}
	}
	s.files = 1 + len(objects)
	if back, err := source.DirStream(s.dir); err != nil || !bytes.Equal(back, stream) {
		return side{}, fmt.Errorf("%s does not read back as the package stream (error: %v)", s.dir, err)
	}
	if err := os.WriteFile(s.yaml, stream, 0o644); err != nil {
		return side{}, err
	}
	img, err := fixture.Image(stream)
	if err != nil {
		return side{}, err
	}
	return s, fixture.WriteTarball(s.xpkg, "bench.local/"+label+":v1", img)
}

// diffExits are kubectl-xpkg diff's exit statuses for packages that
// differ: 1, and 3 when a change is breaking.
var diffExits = []int{1, 3}

// report runs the plugin's diff once on two package directories, checks
// that it read both as directories, and returns its JSON report.
func report(bin string, from, to side) (*diff.Report, error) {
	cmd := exec.Command(bin, "diff", "-o", "json", from.dir, to.dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) && slices.Contains(diffExits, exit.ExitCode()) {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s diff %s %s: %v: %s", bin, from.dir, to.dir, err, stderr.String())
	}
	for _, dir := range []string{from.dir, to.dir} {
		if !strings.Contains(stderr.String(), "Reading directory "+dir+" ") {
			return nil, fmt.Errorf("%s diff did not say it read the directory %s; its stderr:\n%s", bin, dir, stderr.String())
		}
	}
	var r diff.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("%s diff -o json: %w", bin, err)
	}
	return &r, nil
}

// checkScaled checks that a synthetic pair's report counts copies times the
// objects and object changes of the pair it was made from: the renamed
// copies are all read, and none collides with another.
func checkScaled(base, synth *diff.Report, copies int) error {
	objectChanges := func(r *diff.Report) int { return r.Summary.Changes - len(r.Package) }
	b, s := base.Summary, synth.Summary
	want := []int{b.Added * copies, b.Removed * copies, b.Changed * copies, b.Unchanged * copies, objectChanges(base) * copies}
	got := []int{s.Added, s.Removed, s.Changed, s.Unchanged, objectChanges(synth)}
	if !slices.Equal(got, want) {
		return fmt.Errorf("the %dx pair's diff is not %d times the original's: %s, against %s", copies, copies, s, b)
	}
	return nil
}
