package plugin

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// RollbackOptions holds the flags and state of `kubectl xpkg rollback`.
type RollbackOptions struct {
	ToRevision  string
	Activate    bool
	Wait        waitFlag
	XPNamespace string
	Plan        PlanFlags
	Assume      AssumeFlag
	Source      SourceFlags
	Cluster     ClusterFlags

	arg  string
	root *Root
}

// NewRollbackOptions returns the options with their defaults.
func NewRollbackOptions(genericiooptions.IOStreams) *RollbackOptions {
	return &RollbackOptions{XPNamespace: defaultXPNamespace}
}

// NewCmdRollback builds `kubectl xpkg rollback`.
func NewCmdRollback(root *Root) *cobra.Command {
	o := NewRollbackOptions(root.IOStreams)
	cmd := &cobra.Command{
		Use:     "rollback NAME|KIND/NAME",
		Short:   "Point a package back at the version of an earlier revision, after a plan",
		Long:    helpLong("rollback"),
		Example: helpExample("rollback"),
		GroupID: groupCluster,
		Args:    exactArgs(1, "NAME"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringVar(&o.ToRevision, "to-revision", "", "The revision to go back to: its name or number (default: the previous one).")
	f.BoolVar(&o.Activate, "activate", false, "Activate the revision of a package with Manual activation.")
	addWaitFlag(f, &o.Wait, "the old version is installed, healthy and its definitions established")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane and of the package's pull secrets.")
	o.Plan.AddFlags(cmd, "stored versions dropped, live objects, dependents' constraints")
	o.Plan.AddNoPlanFlag(cmd.Flags())
	o.Assume.AddFlag(cmd)
	o.Source.AddFlags(f)
	o.Cluster.AddFlags(f)
	cmd.ValidArgsFunction = completePackages(root, false, true)
	return cmd
}

// Complete reads the arguments.
func (o *RollbackOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root, o.arg = root, args[0]
	return nil
}

// Validate checks the flags.
func (o *RollbackOptions) Validate() error {
	if err := o.Assume.Validate(); err != nil {
		return err
	}
	if err := o.Plan.Validate(); err != nil {
		return err
	}
	if o.Plan.DryRun != dryRunNone && o.Wait.d > 0 {
		return &exit.UsageError{Err: errors.New("--wait cannot be combined with --dry-run"), Hint: "See 'kubectl xpkg rollback --help' for usage."}
	}
	return nil
}

// Run finds the revision to go back to, plans, gates and applies.
func (o *RollbackOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	cfg.AssumeUpgrades = o.Assume.Value
	cfg.Events.Results = o.Plan.results(o.root)
	rb := action.NewRollback(cfg)
	rb.ToRevision, rb.Activate, rb.NoPlan = o.ToRevision, o.Activate, o.Plan.NoPlan
	rb.Options = o.Plan.changeOptions(o.root, o.Wait.d, false)
	plan, err := rb.Plan(ctx, o.arg)
	if err != nil {
		return err
	}
	return o.Plan.run(ctx, o.root, plan, rb.Apply)
}
