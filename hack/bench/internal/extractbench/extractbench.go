// Package extractbench benchmarks `kubectl xpkg extract` to stdout against
// `crane export REF -` (go-containerregistry's CLI, built from this
// module's go-containerregistry) and against its floor: fetching the same
// layer blob from the same loopback registry and gunzipping it to
// /dev/null. It pushes provider-aws v0.58.0 and a synthetic package ten
// times larger to an in-process registry, runs each command several times
// as a separate process, the commands of a package taking turns with the
// plugin's --help (whose peak RSS extract's is compared with), and prints
// the median wall time and the peak RSS of each, with the ratios, as a
// Markdown table.
//
// The floor runs as a benchmark binary started with FloorArg (Run's
// floorBin, hack/bench/extract itself when it runs alone), whose main
// therefore begins, after the measure.ChildArg check, with:
//
//	if len(os.Args) == 4 && os.Args[1] == extractbench.FloorArg {
//		if err := extractbench.Floor(os.Args[2], os.Args[3]); err != nil {
//			log.Fatal(err)
//		}
//		return
//	}
package extractbench

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// FloorArg is the first argument that makes a benchmark binary run the
// floor: FloorArg BLOB-REF stdlib|klauspost.
const FloorArg = "floor"

// ServeFloor runs the floor command and exits when the program was
// started as it (with FloorArg, a blob reference and an implementation);
// otherwise it returns.
func ServeFloor() {
	if len(os.Args) == 4 && os.Args[1] == FloorArg {
		if err := Floor(os.Args[2], os.Args[3]); err != nil {
			log.Fatal(err)
		}
		os.Exit(0)
	}
}

// Floor fetches a blob and gunzips it to nothing, with the standard
// library's gzip or klauspost/compress's.
func Floor(ref, impl string) error {
	d, err := name.NewDigest(ref)
	if err != nil {
		return err
	}
	l, err := remote.Layer(d)
	if err != nil {
		return err
	}
	rc, err := l.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	var zr io.Reader
	if impl == "stdlib" {
		zr, err = gzip.NewReader(rc)
	} else {
		zr, err = kgzip.NewReader(rc)
	}
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, zr)
	return err
}

// Run measures bin's extract on both packages, runs times each, and writes
// the table to w. floorBin runs the floor; "" is this binary. tmp holds
// the crane binary it builds.
func Run(bin, floorBin, tmp string, runs int, w io.Writer) error {
	crane, err := BuildCrane(tmp)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	root, err := testenv.ModuleRoot()
	if err != nil {
		return err
	}
	aws, err := source.DirStream(filepath.Join(root, "hack/testdata/packages/provider-aws/v0.58.0"))
	if err != nil {
		return err
	}
	if floorBin == "" {
		if floorBin, err = os.Executable(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "| package | uncompressed | extract (median) | crane export (median) | **extract / crane export** | floor: fetch + gunzip | extract / floor | extract peak RSS | --help peak RSS | **extract − --help RSS** |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, pkg := range []struct {
		name   string
		stream []byte
	}{{"provider-aws v0.58.0", aws}, {"synthetic 10x", bytes.Repeat(aws, 10)}} {
		ref, blob, err := push(host, pkg.name, pkg.stream)
		if err != nil {
			return err
		}
		res, err := measure.Interleave(runs,
			measure.Command{Bin: bin, Args: []string{"extract", ref}},
			measure.Command{Bin: crane, Args: []string{"export", ref, "-"}},
			measure.Command{Bin: floorBin, Args: []string{FloorArg, blob, "klauspost"}},
			measure.Command{Bin: bin, Args: []string{"--help"}})
		if err != nil {
			return err
		}
		ext, cr, fk, help := res[0], res[1], res[2], res[3]
		fmt.Fprintf(w, "| %s | %.1f MB | %s | %s | %.2f | %s | %.2f | %.1f MiB | %.1f MiB | %+.1f MiB |\n", pkg.name,
			float64(len(pkg.stream))/1e6, ext.Wall.Round(time.Millisecond), cr.Wall.Round(time.Millisecond),
			ext.Wall.Seconds()/cr.Wall.Seconds(), fk.Wall.Round(time.Millisecond), ext.Wall.Seconds()/fk.Wall.Seconds(),
			ext.MiB(), help.MiB(), ext.MiB()-help.MiB())
	}
	return nil
}

// BuildCrane builds go-containerregistry's CLI from this module's
// go-containerregistry (stripped, -trimpath, as make build builds the
// plugin) into dir and returns its path.
func BuildCrane(dir string) (string, error) {
	crane := filepath.Join(dir, "crane")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", crane, "github.com/google/go-containerregistry/cmd/crane")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build crane: %v: %s", err, out)
	}
	return crane, nil
}

func push(host, label string, stream []byte) (ref, blob string, err error) {
	img, err := fixture.Image(stream)
	if err != nil {
		return "", "", err
	}
	repo := host + "/bench/" + strings.NewReplacer(" ", "-", ".", "-").Replace(label)
	if err := fixture.Push(repo+":v1", img); err != nil {
		return "", "", err
	}
	layers, err := img.Layers()
	if err != nil {
		return "", "", err
	}
	d, err := layers[0].Digest()
	return repo + ":v1", repo + "@" + d.String(), err
}
