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

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/plugin"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(run(streams, os.Args[1:]))
}

func run(streams genericiooptions.IOStreams, args []string) int {
	ctx, interrupted, stop := onSignals(context.Background())
	defer stop()
	cmd := plugin.NewCmdRoot(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if sig := interrupted(); sig != nil {
		// The verb saw its context cancelled, removed what it had
		// half-written and said what it left; the exit status says why,
		// as a shell reports a process a signal stopped.
		msg := "interrupted by " + signalName(sig)
		if err != nil && !errors.Is(err, exit.Silent) && !isOnlyCancel(err) {
			msg += ": " + exit.Message(err)
		}
		fmt.Fprintf(streams.ErrOut, "error: %s\n", msg)
		return 128 + int(sig.(syscall.Signal))
	}
	if err != nil && !errors.Is(err, exit.Silent) {
		fmt.Fprintf(streams.ErrOut, "error: %s\n", exit.Message(err))
	}
	return exit.Code(err)
}

// onSignals cancels the context at the first SIGINT or SIGTERM, so that
// the verb stops, cleans up and returns; a second one ends the process at
// once, as kubectl's interrupt handling does.
func onSignals(parent context.Context) (context.Context, func() os.Signal, func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	var got os.Signal
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				mu.Lock()
				first := got == nil
				if first {
					got = s
				}
				mu.Unlock()
				if !first {
					os.Exit(128 + int(s.(syscall.Signal)))
				}
				cancel()
			case <-done:
				return
			}
		}
	}()
	interrupted := func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	stop := func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
	return ctx, interrupted, stop
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// isOnlyCancel tells an error that says no more than that the context was
// cancelled (which the interruption message already says).
func isOnlyCancel(err error) bool {
	return errors.Is(err, context.Canceled) && exit.Message(err) == context.Canceled.Error()
}
