package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

var upgradeExample = `  # Upgrade to the newest stable version above the current one
  kubectl xpkg upgrade provider-nop --wait

  # To a version, a semver range (the newest match), or a digest
  kubectl xpkg upgrade provider/provider-nop v0.4.0
  kubectl xpkg upgrade provider-nop '>=0.3 <1'
  kubectl xpkg upgrade function-patch-and-transform sha256:bfc07109d1d45ac6448e51d47060d20f30356ccc152ecec78c1b7721ebd05746

  # The plan only, for a CI gate: it exits 3 when a blocking finding would stop the upgrade
  kubectl xpkg upgrade provider-nop v0.4.0 --dry-run -o json

  # Roll back by itself if the new version is not installed, healthy and established within 5 minutes
  kubectl xpkg upgrade provider-nop v0.4.0 --atomic

  # Activate the first revision of a package installed with --manual-activation
  kubectl xpkg upgrade configuration-aws-network --activate --wait

  # A package with Manual activation: upgrade and activate the new revision
  kubectl xpkg upgrade configuration-aws-network v0.23.0 --activate --wait

  # Pin the new version by digest: spec.package becomes repository:tag@sha256:...
  # (not for a package that others depend on with a version range: see below)
  kubectl xpkg upgrade function-patch-and-transform v0.10.8 --pin

  # Every package to its WANTED version (kubectl xpkg outdated), dependencies
  # first, each waited for before the next; the combined plan alone first
  kubectl xpkg upgrade --all --dry-run
  kubectl xpkg upgrade --all --wait --atomic`

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
		Use:   "upgrade (NAME|KIND/NAME [VERSION] | --all | --family NAME [VERSION])",
		Short: "Point a package at another version, after a plan of what the change would break",
		Long: `Upgrade changes only the package's spec.package, and only while it still names what
the plan read: a JSON patch tests the package's UID, spec generation and reference
before replacing the reference, so the package manager's status writes or a user's
labels never conflict, but another writer's change of the reference or the spec, or
the package made again, stops the upgrade with nothing changed (exit status 4). Crossplane's package manager then
creates and activates a new revision. VERSION is a tag, a digest, or a semver constraint (the newest
matching tag); without it, the newest stable tag above the current version. Tags are
listed from the registry and ordered by semantic version; pre-releases count only with
--pre. With Manual activation the new revision waits to be activated: --activate does
it; --activate without VERSION activates the revision of the package's current version.

Before changing anything, upgrade plans the change: it compares the running revision's
package with the new version (as kubectl xpkg diff does) and checks the result against
the cluster. A blocking finding stops the upgrade with exit status 3 unless --force;
warnings and notes (info) are printed and do not stop it. The rules:

` + findings.RulesHelp(action.ActionUpgrade) + `

--dry-run prints the plan and exits as the upgrade would.

--wait waits until the new revision is installed and healthy and every definition it
installed (CRD, MRD, XRD) is established: a revision can report Healthy while its
definitions cannot be applied. --atomic (implies --wait) puts the previous version back
when that does not happen in time, waits for it, and exits non-zero.

--pin resolves the new tag to the digest it names now and writes
repository:tag@sha256:..., so that the package manager pulls exactly that content
even if the tag is pushed over. A package others depend on with a version range
cannot be pinned: Crossplane records a pinned package's version as its digest and
cannot check a range against it (pinned-dependency, blocking).

--all moves every installed package to its WANTED version (see kubectl xpkg
outdated): the newest version every dependent's constraint admits. It plans every
step first and prints the combined plan; a blocking finding in any step stops it
before anything changes, unless --force. The steps then run dependencies first; each
step after the first is planned again just before it runs, since the cluster changed.
With --wait each step is waited for before the next; with --atomic the step that
fails is rolled back and the steps after it are not tried. Packages pinned by digest
stay pinned, at their new version's digest. A provider family of which any provider
moves moves as one, to the version --family would choose (unless one of its providers
runs a newer one).

--family NAME moves a provider family as one (the providers whose current revision is
labelled pkg.crossplane.io/provider-family: NAME; see FAMILY in kubectl xpkg get -o
wide): the family provider and every member installed, to VERSION, or to the newest
version that every one of their repositories has and every installed package's
constraint admits. One combined plan, gated as --all's; the family provider goes first,
then the members, each planned again before it runs. With --atomic, when a member
fails, it is rolled back and so is every provider of the family moved before it, the
last first: the family ends where it was.`,
		Example: upgradeExample,
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
	if o.All || o.Family != "" {
		return o.runAll(ctx, cfg)
	}
	up := action.NewUpgrade(cfg)
	up.Version, up.Pre, up.Pin, up.Activate, up.NoPlan = o.version, o.Pre, o.Pin, o.Activate, o.Plan.NoPlan
	up.Options = o.Plan.changeOptions(o.root, o.Wait.d, o.Atomic)
	if o.Activate && o.version == "" {
		// Nothing to change: activate the revision the package has.
		up.Options.Out = o.root.IOStreams.Out
		return up.Activated(ctx, o.arg)
	}
	plan, err := up.Plan(ctx, o.arg)
	if plan == nil || err != nil {
		return err
	}
	return o.Plan.run(ctx, o.root, plan, up.Apply)
}
