package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/lifecycle"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Dry-run strategies, as kubectl names them.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

// PlanFlags are the flags of every verb that plans a change: --force,
// --dry-run[=client|server] and -o for the plan.
type PlanFlags struct {
	Force bool
	// NoPlan makes the change without a plan (upgrade and rollback).
	NoPlan bool
	DryRun string
	Output string
}

// AddFlags registers the flags; what names what a forced change ignores.
func (f *PlanFlags) AddFlags(cmd *cobra.Command, what string) {
	fs := cmd.Flags()
	fs.BoolVar(&f.Force, "force", false, "Go ahead even when the plan has blocking findings ("+what+"); never without a plan.")
	addDryRunFlag(fs, &f.DryRun, "print the plan and change nothing", "print the plan and have the API server check the change without making it")
	fs.StringVarP(&f.Output, "output", "o", "", "Print the plan as json or yaml (one document) instead of text.")
	completeOutput(cmd, "json", "yaml")
}

// AddNoPlanFlag adds --no-plan, for the changes that can go ahead
// without reading either package.
func (f *PlanFlags) AddNoPlanFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&f.NoPlan, "no-plan", false, "Make the change without planning it (reads neither package), for when the plan cannot be made: a registry Crossplane reaches and you cannot.")
}

// addDryRunFlag is --dry-run[=client|server] with kubectl's meaning: bare,
// it is client.
func addDryRunFlag(fs *pflag.FlagSet, v *string, client, server string) {
	fs.StringVar(v, "dry-run", dryRunNone, fmt.Sprintf(`"client": %s; "server": %s.`, client, server))
	fs.Lookup("dry-run").NoOptDefVal = dryRunClient
}

func checkDryRun(v string) error {
	switch v {
	case dryRunNone, dryRunClient, dryRunServer:
		return nil
	}
	return &exit.UsageError{Err: fmt.Errorf(`--dry-run must be "none", "client" or "server", not %q`, v), Hint: "See --help for usage."}
}

// Validate checks the flags.
func (f *PlanFlags) Validate() error {
	if err := checkDryRun(f.DryRun); err != nil {
		return err
	}
	if f.NoPlan && (f.DryRun == dryRunClient || f.Output != "" || f.Force) {
		return &exit.UsageError{Err: errors.New("--no-plan makes no plan: it cannot be combined with --dry-run=client, -o or --force"), Hint: "See --help for usage."}
	}
	return printers.CheckFormat(f.Output, printers.FormatJSON, printers.FormatYAML)
}

// show prints the plan: as a document to stdout with -o, as text to
// stdout on a dry run (the plan is the result) and to stderr otherwise
// (it precedes the change).
func (f *PlanFlags) show(r *Root, p *lifecycle.Plan) error {
	if f.Output != "" {
		return printers.PrintObject(r.IOStreams.Out, f.Output, p)
	}
	var w io.Writer = r.IOStreams.ErrOut
	if f.DryRun != dryRunNone {
		w = r.IOStreams.Out
	}
	return lifecycle.WriteText(w, p)
}

// gate says whether the change may go ahead: a blocking finding stops it
// (exit 3) unless --force; a client dry run stops here too, exiting as the
// change would.
func (f *PlanFlags) gate(r *Root, p *lifecycle.Plan) (proceed bool, err error) {
	if err := f.show(r, p); err != nil {
		return false, err
	}
	if p.Blocking() {
		if !f.Force {
			return false, exit.WithCode(exit.PlanRefused, &lifecycle.RefusedError{Plan: p})
		}
		fmt.Fprintf(r.IOStreams.ErrOut, "Warning: going ahead despite the blocking findings (--force)\n")
	}
	return f.DryRun != dryRunClient, nil
}

// changeError gives a failed change its exit code: a wait that timed out
// (rolled back or not) 124, else 1.
func changeError(ctx context.Context, err error) error {
	var ae *lifecycle.AtomicError
	if errors.As(err, &ae) {
		if ae.RollbackErr != nil {
			return exit.WithCode(exit.RollbackFailed, err)
		}
		return waitError(err) // rolled back: a time-out still says 124
	}
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return &stoppedError{err: err}
	}
	var changed *cluster.ChangedError
	if errors.As(err, &changed) {
		return exit.WithCode(exit.PlanChanged, err)
	}
	return waitError(err)
}

// stoppedError is a change an interruption stopped: what was applied
// stays, and nothing is rolled back.
type stoppedError struct{ err error }

func (e *stoppedError) Error() string {
	return "stopped; the change made so far stays, and what the package manager was doing goes on (kubectl xpkg describe shows where it stands)"
}

func (e *stoppedError) Unwrap() error { return e.err }

// newChange is the use case of upgrade and rollback, saying on stderr what
// each package read found.
func newChange(r *Root, c *cluster.Cluster, xpNamespace string, activate bool, limits xpkg.Limits) *lifecycle.Change {
	return &lifecycle.Change{Cluster: c, Limits: limits, XPNamespace: xpNamespace, Activate: activate,
		OnRead: func(i source.Info) { fmt.Fprintln(r.IOStreams.ErrOut, describeSource(i)) }}
}
