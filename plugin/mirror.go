package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// MirrorOptions holds the flags and state of `kubectl xpkg mirror`.
type MirrorOptions struct {
	To          string
	ToLayout    string
	FromLayout  string
	FromCluster bool
	DryRun      bool
	PullSecret  string
	Jobs        int
	Output      string
	XPNamespace string
	Source      SourceFlags
	Cluster     ClusterFlags

	args           []string
	throughCluster bool
	root           *Root
}

// NewCmdMirror builds `kubectl xpkg mirror`.
func NewCmdMirror(root *Root) *cobra.Command {
	o := &MirrorOptions{root: root}
	cmd := &cobra.Command{
		Use:     "mirror (SOURCE... | --from-layout DIR | --from-cluster) (--to PREFIX | --to-layout DIR)",
		Short:   "Copy packages with their whole dependency closure to another registry or an OCI layout",
		Long:    helpLong("mirror"),
		Example: helpExample("mirror"),
		GroupID: groupLocal,
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringVar(&o.To, "to", "", "Registry prefix to copy to, e.g. registry.example.com/crossplane.")
	f.StringVar(&o.ToLayout, "to-layout", "", "OCI image layout directory to copy to (created if absent; resumed if present).")
	f.StringVar(&o.FromLayout, "from-layout", "", "Copy the packages of this OCI image layout (written by --to-layout) instead of resolving SOURCEs.")
	f.BoolVar(&o.FromCluster, "from-cluster", false, "Mirror every package the cluster's Lock holds, at the version it runs.")
	f.BoolVar(&o.DryRun, "dry-run", false, "Resolve and print the closure; copy nothing.")
	f.StringVar(&o.PullSecret, "pull-secret", "", "With --to: name this Secret (in Crossplane's namespace) in an ImageConfig for the destination registry.")
	f.IntVar(&o.Jobs, "jobs", 4, "Packages copied at once.")
	f.StringVarP(&o.Output, "output", "o", "", "With --dry-run: wide, json, yaml or name; otherwise the ImageConfigs as yaml (default) or json.")
	completeOutput(cmd, "wide", "json", "yaml", "name")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Reading through a cluster (--from-cluster, --context): Crossplane's namespace, where its ImageConfigs' pull secrets are.")
	o.Source.AddRegistryFlags(f)
	o.Cluster.AddFlags(f)
	return cmd
}

// Complete keeps the arguments.
func (o *MirrorOptions) Complete(root *Root, cmd *cobra.Command, args []string) error {
	o.root, o.args = root, args
	o.throughCluster = namesCluster(cmd) && !o.Source.NoImageConfig
	return nil
}

const mirrorHint = "See 'kubectl xpkg mirror --help' for usage."

// Validate checks that one source and one destination are named.
func (o *MirrorOptions) Validate() error {
	usage := func(msg string) error { return &exit.UsageError{Err: errors.New(msg), Hint: mirrorHint} }
	sources := 0
	for _, set := range []bool{len(o.args) > 0, o.FromLayout != "", o.FromCluster} {
		if set {
			sources++
		}
	}
	switch {
	case sources == 0:
		return usage("name what to mirror: package references, --from-layout DIR or --from-cluster")
	case sources > 1:
		return usage("package references, --from-layout and --from-cluster are three ways to name what to mirror: give one")
	case (o.To == "") == (o.ToLayout == ""):
		return usage("name one destination: --to PREFIX (a registry) or --to-layout DIR")
	case o.FromLayout != "" && o.ToLayout != "":
		return usage("--from-layout copies a layout into a registry: give --to PREFIX")
	case o.PullSecret != "" && o.To == "":
		return usage("--pull-secret names a Secret in the ImageConfigs printed for --to; a layout has none")
	case o.Jobs < 1:
		return usage(fmt.Sprintf("--jobs %d: want 1 or more", o.Jobs))
	}
	if o.To != "" {
		if err := action.CheckMirrorPrefix(o.To); err != nil {
			return &exit.UsageError{Err: err, Hint: mirrorHint}
		}
	}
	if o.DryRun {
		return printers.CheckFormat(o.Output, printers.FormatWide, printers.FormatJSON, printers.FormatYAML, printers.FormatName)
	}
	return printers.CheckFormat(o.Output, printers.FormatJSON, printers.FormatYAML)
}

// Run resolves the closure, then copies it and prints the ImageConfigs.
func (o *MirrorOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	m := action.NewMirror(cfg)
	m.To, m.ToLayout, m.FromLayout, m.FromCluster = o.To, o.ToLayout, o.FromLayout, o.FromCluster
	m.PullSecret, m.Jobs, m.ThroughCluster = o.PullSecret, o.Jobs, o.throughCluster
	plan, err := m.Plan(ctx, o.args)
	if err != nil {
		return err
	}
	if o.DryRun {
		return printMirrorPlan(o.root.IOStreams.Out, o.Output, plan)
	}
	if err := o.copy(ctx, m, plan); err != nil {
		return err
	}
	return printImageConfigs(o.root.IOStreams.Out, o.Output, m.ImageConfigs(plan))
}

// copy copies what plan lists, saying on stderr what it copies (a bar on
// a terminal), what it copied, and the strays it left.
func (o *MirrorOptions) copy(ctx context.Context, m *action.Mirror, plan *action.MirrorPlan) error {
	errOut := o.root.IOStreams.ErrOut
	fmt.Fprintf(errOut, "Mirroring %d package(s) to %s\n", len(plan.Packages), mirrorTarget(plan))
	bar := startMirrorProgress(o.root.events().Bar, len(plan.Packages))
	m.OnProgress = bar.add
	m.OnCopied = func(c action.MirrorCopy) { bar.line(errOut, mirrorLine(c)) }
	res, err := m.Run(ctx, plan)
	bar.stop()
	writeMirrorResult(errOut, plan, res)
	if err != nil {
		return err
	}
	warnStrays(ctx, errOut, m, plan)
	return nil
}

// warnStrays says, on stderr, which installed packages the ImageConfigs
// would send to the mirror although it does not hold them.
func warnStrays(ctx context.Context, w io.Writer, m *action.Mirror, plan *action.MirrorPlan) {
	strays, err := m.Strays(ctx, plan)
	if err != nil {
		fmt.Fprintf(w, "Warning: the installed packages were not checked against these ImageConfigs: %s\n", exit.Message(err))
	}
	for _, s := range strays {
		fmt.Fprintf(w, "Warning: ImageConfig %s would also send the installed package %s (%s) to %s, which this mirror does not hold: mirror it too (kubectl xpkg mirror %s --to %s), or its next revision, upgrade or cache eviction fails to pull\n",
			s.ImageConfig, s.Ref, s.Package, s.Resolved, s.Ref, plan.To)
	}
}
