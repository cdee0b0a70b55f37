package plugin

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

var rollbackExample = `  # The plan only: a rollback can strand a stored version too
  kubectl xpkg rollback provider-nop --dry-run

  # Go back to the version the previous revision ran, waiting until it is healthy
  kubectl xpkg rollback provider-nop --wait

  # Go back to a revision Crossplane keeps (its name, or its number in describe)
  kubectl xpkg rollback provider/provider-nop --to-revision 2`

// RollbackOptions holds the flags and state of `kubectl xpkg rollback`.
type RollbackOptions struct {
	ToRevision  string
	Activate    bool
	Wait        waitFlag
	XPNamespace string
	Plan        PlanFlags
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
		Use:   "rollback NAME|KIND/NAME",
		Short: "Point a package back at the version of an earlier revision, after a plan",
		Long: `Rollback points the package's spec.package back at the image of its previous
revision (the newest older one with another image), or of the revision --to-revision
names (its name, or its number as kubectl xpkg describe lists it), among those Crossplane
keeps (spec.revisionHistoryLimit, 1 by default). Crossplane cannot re-activate an old
revision by itself; pointing the package back at its image makes the package manager
answer, as each release does:

* Crossplane up to v2.3 names a revision after its image's digest: it reuses the old
  revision, activates it and renumbers it as the newest.
* Crossplane v2.4 and later name a revision after the digest and the package's
  generation, which the rollback moves on: they make a new revision of the old image,
  numbered as the newest, and garbage-collect the oldest past the history limit.

A rollback is planned like an upgrade (see kubectl xpkg upgrade --help): going back can
drop a version objects are stored at too (stored-version-dropped), and dependents'
constraints still count. A downgrade is expected here, so it is only noted. A blocking
finding stops it with exit status 3 unless --force; --dry-run prints the plan and exits
as the rollback would. The rules:

` + findings.RulesHelp(action.ActionRollback) + `

--wait waits until the old version is installed, healthy and
its definitions established.`,
		Example: rollbackExample,
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
	rb := action.NewRollback(cfg)
	rb.ToRevision, rb.Activate, rb.NoPlan = o.ToRevision, o.Activate, o.Plan.NoPlan
	rb.Options = o.Plan.changeOptions(o.root, o.Wait.d, false)
	plan, err := rb.Plan(ctx, o.arg)
	if err != nil {
		return err
	}
	return o.Plan.run(ctx, o.root, plan, rb.Apply)
}
