// Command diff benchmarks `kubectl xpkg diff OLD NEW` against GNU `diff -u`
// of the same two package.yaml streams, on provider-aws v0.50.0..v0.58.0 and
// a synthetic pair ten times larger, and prints the median wall time and
// peak RSS of each as a Markdown table with the ratios of the plugin's
// times to GNU diff's. The work, and its description, is in
// hack/bench/internal/diffbench, which go run ./hack/bench also runs.
//
//	go run ./hack/bench/diff -bin bin/kubectl-xpkg [-runs 7]
package main

import (
	"flag"
	"log"
	"os"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/diffbench"
	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

func main() {
	measure.ServeChild()
	bin := flag.String("bin", "bin/kubectl-xpkg", "kubectl-xpkg binary to measure")
	runs := flag.Int("runs", 7, "runs of each command; the median is reported")
	flag.Parse()
	if err := diffbench.Run(*bin, *runs, os.Stdout); err != nil {
		log.Fatal(err)
	}
}
