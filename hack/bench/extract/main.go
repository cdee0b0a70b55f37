// Command extract benchmarks `kubectl xpkg extract` to stdout against
// `crane export REF -` and against its floor: fetching the same layer blob from the same loopback registry and
// gunzipping it to /dev/null. It pushes provider-aws v0.58.0 and a
// synthetic package ten times larger to an in-process registry, runs each
// command several times as a separate process, and prints the median wall
// time and the peak RSS of each, with the ratios. The work is done by
// hack/bench/internal/extractbench, which go run ./hack/bench also runs.
//
//	go run ./hack/bench/extract -bin bin/kubectl-xpkg [-runs 7]
package main

import (
	"flag"
	"log"
	"os"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/extractbench"
	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

func main() {
	measure.ServeChild()
	extractbench.ServeFloor()
	bin := flag.String("bin", "bin/kubectl-xpkg", "kubectl-xpkg binary to measure")
	runs := flag.Int("runs", 7, "runs of each command; the median is reported")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "bench-extract-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := extractbench.Run(*bin, "", tmp, *runs, os.Stdout); err != nil {
		log.Print(err)
		os.RemoveAll(tmp)
		os.Exit(1)
	}
}
