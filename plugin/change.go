package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/flags"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
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
func (f *PlanFlags) show(r *Root, p *action.Plan) error {
	if f.Output != "" {
		return printers.PrintObject(r.IOStreams.Out, f.Output, p)
	}
	var w io.Writer = r.IOStreams.ErrOut
	if f.DryRun != dryRunNone {
		w = r.IOStreams.Out
	}
	return writePlan(w, p)
}

// gate says whether the change may go ahead: a blocking finding stops it
// (exit 3) unless --force; a client dry run stops here too, exiting as the
// change would.
func (f *PlanFlags) gate(r *Root, p *action.Plan) (proceed bool, err error) {
	if err := f.show(r, p); err != nil {
		return false, err
	}
	if err := action.Gate(p.Refused(), f.Force, r.events()); err != nil {
		return false, err
	}
	return f.DryRun != dryRunClient, nil
}

// changeOptions are how the change is carried out.
func (f *PlanFlags) changeOptions(r *Root, wait time.Duration, atomic bool) action.ChangeOptions {
	return action.ChangeOptions{Wait: wait, Atomic: atomic, DryRun: f.DryRun == dryRunServer}
}

// results is where the change's results go (and what it did on its way,
// Events.Results): with -o the plan is what stdout holds, and they go to
// stderr.
func (f *PlanFlags) results(r *Root) io.Writer {
	if f.Output != "" {
		return r.IOStreams.ErrOut
	}
	return r.IOStreams.Out
}

// run gates the change on its plan (one made without a plan has nothing
// to show), makes it and says what it did: what upgrade and rollback
// share.
func (f *PlanFlags) run(ctx context.Context, r *Root, plan *action.Plan, apply func(context.Context, *action.Plan) (*action.Result, error)) error {
	if plan.Planned() {
		if proceed, err := f.gate(r, plan); !proceed || err != nil {
			return err
		}
	}
	res, err := apply(ctx, plan)
	if err != nil {
		return err
	}
	out := f.results(r)
	verb := map[string]string{action.ActionUpgrade: "upgraded", action.ActionRollback: "rolled back"}[res.Action]
	if res.DryRun {
		fmt.Fprintf(out, "%s would be %s from %s to %s (server dry run: nothing changed)\n", res.Package, verb, res.From, res.To)
		return nil
	}
	fmt.Fprintf(out, "%s %s from %s to %s\n", res.Package, verb, res.From, res.To)
	return nil
}

// AssumeFlag is --assume-dependency-upgrades, of the verbs whose plans
// predict what the package manager does with dependencies.
type AssumeFlag struct{ Value string }

// AddFlag registers it.
func (a *AssumeFlag) AddFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.Value, "assume-dependency-upgrades", "", "Plan as if Crossplane ran with automatic dependency upgrades off, on (upgrades: --enable-dependency-version-upgrades) or on with downgrades (downgrades), instead of reading its Deployment's flags; for plans made where that cannot be read.")
	_ = cmd.RegisterFlagCompletionFunc("assume-dependency-upgrades", cobra.FixedCompletions(flags.Assumptions, cobra.ShellCompDirectiveNoFileComp))
}

// Validate refuses a value that is none of off, upgrades, downgrades.
func (a *AssumeFlag) Validate() error {
	if err := flags.CheckAssumption(a.Value); err != nil {
		return &exit.UsageError{Err: err, Hint: "See --help for usage."}
	}
	return nil
}
