package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// DefaultRenameTimeout bounds a rename: every wait in it, each package's
// runtime stopping and starting.
const DefaultRenameTimeout = 10 * time.Minute

// RenameOptions holds the flags and state of `kubectl xpkg rename`.
type RenameOptions struct {
	Yes         bool
	Undo        bool
	Timeout     time.Duration
	XPNamespace string
	Plan        PlanFlags
	Cluster     ClusterFlags

	arg, to string
	root    *Root
}

// NewRenameOptions returns the options with their defaults.
func NewRenameOptions(genericiooptions.IOStreams) *RenameOptions {
	return &RenameOptions{XPNamespace: defaultXPNamespace, Timeout: DefaultRenameTimeout}
}

// NewCmdRename builds `kubectl xpkg rename`.
func NewCmdRename(root *Root) *cobra.Command {
	o := NewRenameOptions(root.IOStreams)
	cmd := &cobra.Command{
		Use:     "rename NAME|KIND/NAME [NEW-NAME]",
		Short:   "Give a package another name, by default its resolver name, keeping every object it installed",
		Long:    helpLong("rename"),
		Example: helpExample("rename"),
		GroupID: groupCluster,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				return exactArgs(1, "NAME, and at most a NEW-NAME")(c, args)
			}
			return nil
		},
		RunE: runOptions(root, o),
	}
	f := cmd.Flags()
	o.Plan.AddFlags(cmd, "a state that proves nothing, a taken name, an unknown Crossplane release, a GitOps tool")
	f.BoolVarP(&o.Yes, "yes", "y", false, "Do not ask for confirmation.")
	f.BoolVar(&o.Undo, "undo", false, "Undo the rename a run cut short left recorded on the package, instead of finishing it.")
	f.DurationVar(&o.Timeout, "timeout", DefaultRenameTimeout, "How long the whole rename may take, its waits included; past it the rename is undone.")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane and of the packages' runtimes.")
	o.Cluster.AddFlags(f)
	pkgs := completePackages(root, false, true)
	cmd.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp // NEW-NAME: a name of your own
		}
		return pkgs(c, args, toComplete)
	}
	return cmd
}

// Complete reads the arguments.
func (o *RenameOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root, o.arg = root, args[0]
	if len(args) == 2 {
		o.to = args[1]
	}
	return nil
}

// Validate checks the flags.
func (o *RenameOptions) Validate() error {
	if err := o.Plan.Validate(); err != nil {
		return err
	}
	if o.Timeout <= 0 {
		return &exit.UsageError{Err: errors.New("--timeout must be more than 0"), Hint: "See 'kubectl xpkg rename --help' for usage."}
	}
	return nil
}

// Run plans the rename, gates it, confirms it and carries it out.
func (o *RenameOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, nil, o.XPNamespace)
	if err != nil {
		return err
	}
	rn := action.NewRename(cfg)
	rn.To, rn.Timeout, rn.DryRun, rn.Undo = o.to, o.Timeout, o.Plan.DryRun == dryRunServer, o.Undo
	plan, err := rn.Plan(ctx, o.arg)
	if err != nil || plan == nil {
		return err
	}
	if proceed, err := o.gate(plan); !proceed || err != nil {
		return err
	}
	if !confirm(o.root, o.Yes || o.Plan.DryRun != dryRunNone, renameQuestion(plan)) {
		return errors.New("rename cancelled")
	}
	res, err := rn.Apply(ctx, plan)
	if err != nil {
		return err
	}
	printRenamed(o.Plan.results(o.root), res)
	return nil
}

// renameQuestion is what rename asks before it changes anything.
func renameQuestion(plan *action.RenamePlan) string {
	switch {
	case plan.Resume != nil && plan.Undo:
		return fmt.Sprintf("Undo the rename of %s to %s?", plan.Package, plan.To)
	case plan.Resume != nil:
		return fmt.Sprintf("Finish the rename of %s to %s?", plan.Package, plan.To)
	}
	return fmt.Sprintf("Rename %s to %s?", plan.Package, plan.To)
}

// printRenamed says how the rename ended.
func printRenamed(out io.Writer, res *action.RenameResult) {
	switch {
	case res.DryRun:
		fmt.Fprintf(out, "%s would be renamed to %s (server dry run: the new package and the pause checked; nothing changed)\n", res.From, res.To)
	case res.LeftOver:
		fmt.Fprintf(out, "rename of %s to %s finished: %s was deleted already, and %s is installed and healthy\n", res.From, res.To, res.From, res.To)
	case res.Undone:
		fmt.Fprintf(out, "rename of %s to %s undone: %s is installed and healthy under its name again, and %s is gone\n", res.From, res.To, res.From, res.To)
	default:
		fmt.Fprintf(out, "%s renamed to %s: %d objects handed over, %d live objects of their kinds kept\n", res.From, res.To, res.Objects, res.Live)
	}
}

// gate prints the plan and says whether the rename may go ahead: a
// blocking finding stops it (exit 3) unless --force; a client dry run
// stops here too, exiting as the rename would.
func (o *RenameOptions) gate(plan *action.RenamePlan) (proceed bool, err error) {
	if err := o.show(plan); err != nil {
		return false, err
	}
	if err := action.Gate(plan.Refused(), o.Plan.Force, o.root.events()); err != nil {
		return false, err
	}
	return o.Plan.DryRun != dryRunClient, nil
}

// show prints the plan: as a document to stdout with -o, as text to
// stdout on a dry run and to stderr otherwise.
func (o *RenameOptions) show(plan *action.RenamePlan) error {
	if o.Plan.Output != "" {
		return printers.PrintObject(o.root.IOStreams.Out, o.Plan.Output, plan)
	}
	var w io.Writer = o.root.IOStreams.ErrOut
	if o.Plan.DryRun != dryRunNone {
		w = o.root.IOStreams.Out
	}
	return writeRenamePlan(w, plan)
}
