package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// UpgradeOptions holds the flags and state of `kubectl xpkg upgrade`.
type UpgradeOptions struct {
	All         bool
	Family      string
	Pin         bool
	Pre         bool
	Activate    bool
	Atomic      bool
	Wait        waitFlag
	XPNamespace string
	Plan        PlanFlags
	Assume      AssumeFlag
	Source      SourceFlags
	Cluster     ClusterFlags

	arg, version string
	root         *Root
}

// NewUpgradeOptions returns the options with their defaults.
func NewUpgradeOptions(streams genericiooptions.IOStreams) *UpgradeOptions {
	return &UpgradeOptions{XPNamespace: defaultXPNamespace}
}

// NewCmdUpgrade builds `kubectl xpkg upgrade`.
func NewCmdUpgrade(root *Root) *cobra.Command {
	o := NewUpgradeOptions(root.IOStreams)
	cmd := &cobra.Command{
		Use:     "upgrade (NAME|KIND/NAME [VERSION] | --all | --family NAME [VERSION])",
		Short:   "Point a package at another version, after a plan of what the change would break",
		Long:    helpLong("upgrade"),
		Example: helpExample("upgrade"),
		GroupID: groupCluster,
		Args:    cobra.RangeArgs(0, 2),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.BoolVar(&o.All, "all", false, "Move every installed package to its WANTED version (kubectl xpkg outdated), dependencies first.")
	f.StringVar(&o.Family, "family", "", "Move the provider family NAME as one: its family provider, then every member installed, to one version.")
	f.BoolVar(&o.Pin, "pin", false, "Pin the new version by digest: write repository:tag@sha256:... to spec.package.")
	f.BoolVar(&o.Pre, "pre", false, "Consider pre-release versions.")
	f.BoolVar(&o.Activate, "activate", false, "Activate the new revision of a package with Manual activation.")
	f.BoolVar(&o.Atomic, "atomic", false, "Wait (--wait, default 5m), and roll back to the previous version if the new one is not installed, healthy and established in time.")
	addWaitFlag(f, &o.Wait, "the new version is installed, healthy and its definitions established")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane and of the package's pull secrets.")
	o.Plan.AddFlags(cmd, "stored versions dropped, live objects, dependents' constraints, downgrades")
	o.Plan.AddNoPlanFlag(cmd.Flags())
	o.Assume.AddFlag(cmd)
	f.BoolVar(&o.Plan.Force, "skip-preflight", false, "")
	_ = f.MarkDeprecated("skip-preflight", "use --force")
	o.Source.AddFlags(f)
	o.Cluster.AddFlags(f)
	cmd.ValidArgsFunction = completePackages(root, false, true)
	return cmd
}

// Complete reads the arguments.
func (o *UpgradeOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root = root
	usage := func(msg string) error {
		return &exit.UsageError{Err: errors.New(msg), Hint: "See 'kubectl xpkg upgrade --help' for usage."}
	}
	switch {
	case o.All && o.Family != "":
		return usage("--all and --family are two ways to choose what moves: give one")
	case o.All && len(args) > 0:
		return usage("--all takes no NAME or VERSION: it moves every package to its WANTED version")
	case o.Family != "" && len(args) > 1:
		return usage("--family takes at most a VERSION: every provider of the family moves to it")
	case o.Family != "" && len(args) == 1:
		o.version = args[0]
	case o.Family != "", o.All:
	case len(args) == 0:
		return usage("name the package to upgrade, or pass --all or --family NAME")
	default:
		o.arg = args[0]
	}
	if len(args) == 2 {
		o.version = args[1]
	}
	if o.Atomic && o.Wait.d == 0 {
		o.Wait.d = DefaultWait
	}
	return nil
}

// Validate checks the flags.
func (o *UpgradeOptions) Validate() error {
	if err := o.Assume.Validate(); err != nil {
		return err
	}
	if err := o.Plan.Validate(); err != nil {
		return err
	}
	if o.Pin && o.Activate && o.version == "" && !o.All {
		return &exit.UsageError{Err: fmt.Errorf("--pin needs a VERSION (or none of --activate): --activate alone changes no reference"), Hint: "See 'kubectl xpkg upgrade --help' for usage."}
	}
	if o.Plan.NoPlan && (o.All || o.Family != "") {
		return &exit.UsageError{Err: fmt.Errorf("--no-plan is for one package: upgrade --all and --family plan every step"), Hint: "See 'kubectl xpkg upgrade --help' for usage."}
	}
	if o.Plan.DryRun != dryRunNone && (o.Atomic || o.Wait.d > 0) {
		return &exit.UsageError{Err: fmt.Errorf("--dry-run cannot be combined with --atomic or --wait"), Hint: "See 'kubectl xpkg upgrade --help' for usage."}
	}
	return nil
}

// Run plans the upgrade, gates it, and applies it.
func (o *UpgradeOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	cfg.AssumeUpgrades = o.Assume.Value
	cfg.Events.Results = o.Plan.results(o.root)
	if o.All || o.Family != "" {
		return o.runAll(ctx, cfg)
	}
	up := action.NewUpgrade(cfg)
	up.Version, up.Pre, up.Pin, up.Activate, up.NoPlan = o.version, o.Pre, o.Pin, o.Activate, o.Plan.NoPlan
	up.Options = o.Plan.changeOptions(o.root, o.Wait.d, o.Atomic)
	if o.Activate && o.version == "" {
		// Nothing to change: activate the revision the package has.
		cfg.Events.Results = o.root.IOStreams.Out
		return up.Activated(ctx, o.arg)
	}
	plan, err := up.Plan(ctx, o.arg)
	if plan == nil || err != nil {
		return err
	}
	return o.Plan.run(ctx, o.root, plan, up.Apply)
}
