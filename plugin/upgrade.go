package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

var upgradeExample = `  # Upgrade to the newest stable version above the current one
  kubectl xpkg upgrade crossplane-contrib-provider-nop --wait

  # To a version, a semver range (the newest match), or a digest
  kubectl xpkg upgrade provider/provider-nop v0.4.0
  kubectl xpkg upgrade provider-nop '>=0.3 <1'
  kubectl xpkg upgrade provider-nop sha256:66fa8fa653e9ea674be5a1c61d83e51bcd794c8b897286a7e9487ea4e0211f17

  # A package with Manual activation: upgrade and activate the new revision
  kubectl xpkg upgrade configuration-aws-network v0.24.0 --activate --wait

  # Activate the first revision of a package installed with --manual-activation
  kubectl xpkg upgrade configuration-aws-network --activate --wait`

// UpgradeOptions holds the flags and state of `kubectl xpkg upgrade`.
type UpgradeOptions struct {
	Pre         bool
	Activate    bool
	DryRun      bool
	Wait        waitFlag
	XPNamespace string
	Source      SourceFlags
	Cluster     ClusterFlags
	root        *Root
}

// NewCmdUpgrade builds `kubectl xpkg upgrade`.
func NewCmdUpgrade(root *Root) *cobra.Command {
	o := &UpgradeOptions{root: root}
	cmd := &cobra.Command{
		Use:   "upgrade NAME|KIND/NAME [VERSION]",
		Short: "Point a package at another version: a tag, a digest, a semver range, or the newest",
		Long: `Upgrade changes only the package's spec.package, retrying on conflicts; Crossplane's
package manager then creates and activates a new revision. VERSION is a tag, a digest,
or a semver constraint (the newest matching tag); without it, the newest stable tag
above the current version. Tags are listed from the registry and ordered by semantic
version; pre-releases count only with --pre. With Manual activation the new revision
waits to be activated: --activate does it; --activate without VERSION activates the
revision of the package's current version (after install --manual-activation).`,
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
	f.BoolVar(&o.DryRun, "dry-run", false, "Resolve the version and have the API server check the change without making it.")
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
	target, err := o.resolve(ctx, c, p, version)
	if err != nil {
		return err
	}
	if target == p.Source {
		fmt.Fprintf(o.root.IOStreams.ErrOut, "%s is already at %s: nothing to do\n", what, p.Version)
		return nil
	}
	updated, err := c.SetPackage(ctx, p, target, o.DryRun)
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", what, err)
	}
	suffix := ""
	if o.DryRun {
		suffix = " (server dry run)"
	}
	fmt.Fprintf(o.root.IOStreams.Out, "%s upgraded from %s to %s%s\n", what, p.Version, updated.Version, suffix)
	if o.DryRun {
		return nil
	}
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

// resolve turns VERSION into the reference to install.
func (o *UpgradeOptions) resolve(ctx context.Context, c *cluster.Cluster, p *cluster.Package, version string) (string, error) {
	repo := cluster.RefRepository(p.Source)
	switch {
	case strings.HasPrefix(version, "sha256:"):
		return repo + "@" + version, nil
	case version != "" && !versions.IsConstraint(version):
		return repo + ":" + version, nil
	}
	so, _, err := o.Source.Options()
	if err != nil {
		return "", err
	}
	if secrets := pullSecrets(p); len(secrets) > 0 {
		kc, err := c.PullSecretKeychain(ctx, o.XPNamespace, secrets)
		if err != nil {
			return "", err
		}
		so.Keychain = authn.NewMultiKeychain(kc, authn.DefaultKeychain)
	}
	names, err := source.ListTags(ctx, repo, so)
	if err != nil {
		return "", err
	}
	tags := versions.Sort(names)
	if version == "" {
		t, ok := versions.Newer(tags, p.Version, o.Pre)
		if !ok {
			return "", fmt.Errorf("no version of %s is newer than %s (pass --pre to consider pre-releases, or name a VERSION)", repo, p.Version)
		}
		return repo + ":" + t.Name, nil
	}
	matches, err := versions.Filter(tags, version, o.Pre)
	if err != nil {
		return "", err
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("no tag of %s matches %q", repo, version)
	}
	return repo + ":" + matches[0].Name, nil
}

// pullSecrets are the package's spec.packagePullSecrets names.
func pullSecrets(p *cluster.Package) []string {
	refs, _, _ := unstructured.NestedSlice(p.Object.Object, "spec", "packagePullSecrets")
	var out []string
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}
