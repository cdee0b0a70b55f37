// Command kubectl-xpkg is a kubectl plugin that manages Crossplane packages.
package main

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/plugin"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(run(streams, os.Args[1:]))
}

func run(streams genericiooptions.IOStreams, args []string) int {
	cmd := plugin.NewCmdRoot(streams)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err != nil && !errors.Is(err, exit.Silent) {
		fmt.Fprintf(streams.ErrOut, "error: %s\n", exit.Message(err))
	}
	return exit.Code(err)
}
