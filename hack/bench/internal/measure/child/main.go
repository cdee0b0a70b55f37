// Command child is the light measuring child of package measure: it runs a
// command and reports its wall time and peak RSS, as a benchmark binary
// started with measure.ChildArg does, but imports only the standard
// library, so that its own footprint (which Linux hands on to the command
// as a floor under its peak RSS) is as small as a Go program's can be.
//
//	child OK-STATUSES COMMAND [ARG...]
package main

import (
	"log"
	"os"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

func main() {
	if err := measure.Child(os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}
