// Command kubectl-xpkg is a kubectl plugin that manages Crossplane packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/interrupt"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/startup"
	"github.com/kubectl-xpkg/kubectl-xpkg/plugin"
)

func main() {
	startup.Done()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(run(streams, os.Args[1:]))
}

func run(streams genericiooptions.IOStreams, args []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got os.Signal
	// kubectl's interrupt handler: at the first SIGINT, SIGTERM, SIGHUP
	// (the terminal closed) or SIGQUIT the context is cancelled, so that
	// the verb stops, removes what it half-wrote and says what it left;
	// a second signal then ends the process at once, as it would have
	// without a handler.
	h := interrupt.New(func(s os.Signal) {
		mu.Lock()
		got = s
		mu.Unlock()
		signal.Reset(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	}, cancel)
	cmd := plugin.NewCmdRoot(streams)
	cmd.SetArgs(args)
	err := h.Run(func() error { return cmd.ExecuteContext(ctx) })
	mu.Lock()
	sig := got
	mu.Unlock()
	if sig != nil && exit.Code(err) != exit.RollbackFailed {
		// The exit status says why, as a shell reports a process a signal
		// stopped.
		msg := "interrupted by " + signalName(sig)
		if err != nil && !errors.Is(err, exit.Silent) && !isOnlyCancel(err) {
			msg += ": " + exit.Message(err)
		}
		fmt.Fprintf(streams.ErrOut, "error: %s\n", msg)
		return exit.Signaled + int(sig.(syscall.Signal))
	}
	return exit.Report(streams.ErrOut, err)
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return "SIGINT"
}

// isOnlyCancel tells an error that says no more than that the context was
// cancelled (which the interruption message already says).
func isOnlyCancel(err error) bool {
	return errors.Is(err, context.Canceled) && exit.Message(err) == context.Canceled.Error()
}
