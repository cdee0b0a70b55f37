package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
)

var upgradeExample = `  # Upgrade to the newest stable version above the current one
  kubectl xpkg upgrade provider-nop --wait

  # To a version, a semver range (the newest match), or a digest
  kubectl xpkg upgrade provider/provider-nop v0.4.0
  kubectl xpkg upgrade provider-nop '>=0.3 <1'
  kubectl xpkg upgrade provider-nop sha256:66fa8fa653e9ea674be5a1c61d83e51bcd794c8b897286a7e9487ea4e0211f17

  # Activate the first revision of a package installed with --manual-activation
  kubectl xpkg upgrade configuration-aws-network --activate --wait

  # A package with Manual activation: upgrade and activate the new revision
  kubectl xpkg upgrade configuration-aws-network v0.23.0 --activate --wait`

// UpgradeOptions holds the flags and state of `kubectl xpkg upgrade`.
type UpgradeOptions struct {
	Pre           bool
	Activate      bool
	DryRun        bool
	SkipPreflight bool
	Wait          waitFlag
	XPNamespace   string
	Source        SourceFlags
	Cluster       ClusterFlags
	root          *Root
}

// NewCmdUpgrade builds `kubectl xpkg upgrade`.
func NewCmdUpgrade(root *Root) *cobra.Command {
	o := &UpgradeOptions{root: root}
	cmd := &cobra.Command{
		Use:   "upgrade NAME|KIND/NAME [VERSION]",
		Short: "Point a package at another version: a tag, a digest, a semver range, or the newest",
		Long: `Upgrade changes only the package's spec.package (a merge patch, which never conflicts
with the package manager's own writes); Crossplane's
package manager then creates and activates a new revision. VERSION is a tag, a digest,
or a semver constraint (the newest matching tag); without it, the newest stable tag
above the current version. Tags are listed from the registry and ordered by semantic
version; pre-releases count only with --pre. With Manual activation the new revision
waits to be activated: --activate does it; --activate without VERSION activates the
revision of the package's current version (after install --manual-activation).

Before changing anything, a preflight compares the installed revision's image with the
new version (as kubectl xpkg diff does) and reads the status.storedVersions of the CRDs
the package defines. It refuses the upgrade, with exit status 3, when the new version
no longer defines or serves an API version objects are stored at: migrate the objects
to a version both serve, drop the old one from the CRD's status.storedVersions, then
upgrade (docs/diff-rules.md shows the commands). Other breaking changes are warnings;
dependency changes are listed, with installed dependencies checked against their new
constraints. --skip-preflight bypasses it all.`,
		Example: upgradeExample,
		GroupID: groupCluster,
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			version := ""
			if len(args) == 2 {
				version = args[1]
			}
			return o.Run(cmd.Context(), args[0], version)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Pre, "pre", false, "Consider pre-release versions.")
	f.BoolVar(&o.Activate, "activate", false, "Activate the new revision of a package with Manual activation.")
	f.BoolVar(&o.DryRun, "dry-run", false, "Resolve the version, print the whole preflight report, and have the API server check the change without making it.")
	f.BoolVar(&o.SkipPreflight, "skip-preflight", false, "Upgrade without comparing the installed revision with the new version and checking the cluster's stored API versions.")
	addWaitFlag(f, &o.Wait, "the new version is installed and healthy")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", "crossplane-system", "Namespace of the package's pull secrets.")
	o.Source.AddFlags(f)
	o.Cluster.AddFlags(f)
	cmd.ValidArgsFunction = completePackages(root, false, true)
	return cmd
}

// Run resolves the target version and applies it.
func (o *UpgradeOptions) Run(ctx context.Context, arg, version string) error {
	c, err := o.Cluster.connect(o.root)
	if err != nil {
		return err
	}
	kind, name, err := resolveKindName(ctx, c, arg)
	if err != nil {
		return err
	}
	p, err := c.Get(ctx, kind, name)
	if err != nil {
		return err
	}
	what := strings.ToLower(p.Kind) + "/" + p.Name
	if o.Activate && version == "" {
		// Nothing to change: activate the revision the package has.
		return o.after(ctx, c, p)
	}
	so, limits, err := o.Source.Options()
	if err != nil {
		return err
	}
	in, err := readInstalled(ctx, c, p, so, o.XPNamespace)
	if err != nil {
		return err
	}
	target, err := in.target(ctx, version, o.Pre)
	if err != nil {
		return err
	}
	if target == p.Source {
		fmt.Fprintf(o.root.IOStreams.ErrOut, "%s is already at %s: nothing to do\n", what, p.Version)
		return nil
	}
	if !o.SkipPreflight {
		if err := o.preflight(ctx, c, in, target, limits); err != nil {
			return err
		}
	}
	updated, err := c.SetPackage(ctx, p, target, o.DryRun)
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", what, err)
	}
	if o.DryRun {
		fmt.Fprintf(o.root.IOStreams.Out, "%s would be upgraded from %s to %s (server dry run: nothing changed)\n", what, p.Version, updated.Version)
		return nil
	}
	fmt.Fprintf(o.root.IOStreams.Out, "%s upgraded from %s to %s\n", what, p.Version, updated.Version)
	return o.after(ctx, c, updated)
}

// after activates and waits, as asked.
func (o *UpgradeOptions) after(ctx context.Context, c *cluster.Cluster, p *cluster.Package) error {
	if p.ActivationPolicy == "Manual" {
		if !o.Activate {
			fmt.Fprintf(o.root.IOStreams.ErrOut, "%s/%s activates revisions manually: its new revision will wait to be activated (upgrade with --activate to do it)\n", strings.ToLower(p.Kind), p.Name)
			return nil
		}
		d := max(o.Wait.d, time.Minute)
		rev, err := c.WaitRevision(ctx, p, p.Source, d)
		if err != nil {
			return waitError(err)
		}
		if err := c.Activate(ctx, rev); err != nil {
			return fmt.Errorf("activate revision %s: %w", rev.Name, err)
		}
		fmt.Fprintf(o.root.IOStreams.Out, "revision %s activated\n", rev.Name)
	}
	if o.Wait.d == 0 {
		return nil
	}
	return waitError(c.WaitReady(ctx, p.Kind, p.Name, o.Wait.d, o.root.IOStreams.ErrOut))
}
