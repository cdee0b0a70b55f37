package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/manifest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// PlanOptions holds the flags and state of `kubectl xpkg plan`.
type PlanOptions struct {
	Filenames   []string
	Recursive   bool
	Prune       bool
	Offline     bool
	Base        []string
	Output      string
	Assume      AssumeFlag
	XPNamespace string
	Source      SourceFlags
	Cluster     ClusterFlags
	root        *Root
}

// NewCmdPlan builds `kubectl xpkg plan -f`.
func NewCmdPlan(root *Root) *cobra.Command {
	o := &PlanOptions{root: root}
	cmd := &cobra.Command{
		Use:     "plan -f FILENAME",
		Short:   "Plan what applying package manifests (a GitOps change) will do to the cluster",
		Long:    helpLong("plan"),
		Example: helpExample("plan"),
		GroupID: groupCluster,
		Args:    exactArgs(0, "no arguments: name the manifests with -f"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "A file, a directory or - (stdin) of manifests; repeat for more.")
	f.BoolVarP(&o.Recursive, "recursive", "R", false, "Read the directories given with -f recursively.")
	f.BoolVar(&o.Prune, "prune", false, "Plan the uninstall of packages installed explicitly that no manifest names (as kubectl apply --prune).")
	f.BoolVar(&o.Offline, "offline", false, "Ask no cluster: plan the manifests against each other, the registries and --base (for CI without cluster credentials).")
	f.StringSliceVar(&o.Base, "base", nil, "With --offline: the previous manifests (a file, a directory or -), e.g. the target branch's checkout; repeat for more.")
	f.StringVarP(&o.Output, "output", "o", "", "Print the plan as json or yaml (one document) instead of text.")
	completeOutput(cmd, "json", "yaml")
	o.Assume.AddFlag(cmd)
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane (its version) and of the packages' pull secrets.")
	o.Source.AddRegistryFlags(f)
	o.Cluster.AddFlags(f)
	return cmd
}

// Complete keeps the root.
func (o *PlanOptions) Complete(root *Root, _ *cobra.Command, _ []string) error {
	o.root = root
	return nil
}

// Validate checks the flags.
func (o *PlanOptions) Validate() error {
	if len(o.Filenames) == 0 {
		return &exit.UsageError{Err: errors.New("name the manifests with -f FILENAME (a file, a directory or -)"), Hint: planHint}
	}
	if err := o.validateOffline(); err != nil {
		return err
	}
	if err := o.Assume.Validate(); err != nil {
		return err
	}
	return printers.CheckFormat(o.Output, printers.FormatJSON, printers.FormatYAML)
}

const planHint = "See 'kubectl xpkg plan --help' for usage."

// validateOffline: online, the cluster is the base; offline there is
// nothing to prune.
func (o *PlanOptions) validateOffline() error {
	switch {
	case len(o.Base) > 0 && !o.Offline:
		return &exit.UsageError{Err: errors.New("--base needs --offline: against a cluster, the cluster is the base"), Hint: planHint}
	case o.Prune && o.Offline:
		return &exit.UsageError{Err: errors.New("--prune cannot be combined with --offline: there is no cluster to uninstall from; the plan lists the packages removed from the manifests"), Hint: planHint}
	case slices.Contains(o.Base, "-") && slices.Contains(o.Filenames, "-"):
		return &exit.UsageError{Err: errors.New("-f - and --base - cannot both read stdin: name one as a file or directory"), Hint: planHint}
	}
	return nil
}

// Run reads the manifests, plans them and exits by the plan.
func (o *PlanOptions) Run(ctx context.Context) error {
	set, err := manifest.Read(o.Filenames, manifest.Options{Recursive: o.Recursive, Stdin: o.root.IOStreams.In})
	if err != nil {
		return err
	}
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	cfg.Offline = o.Offline
	cfg.AssumeUpgrades = o.Assume.Value
	pf := action.NewPlanFiles(cfg, o.Prune)
	pf.Compositions, pf.Policies = set.ReadCompositions(), set.ActivationPolicies()
	if pf.Base, err = o.base(); err != nil {
		return err
	}
	fp, err := pf.Plan(ctx, manifests(set), set.Ignored)
	if err != nil {
		return err
	}
	if err := o.print(fp); err != nil || !fp.Blocking() {
		return err
	}
	return exit.WithCode(exit.PlanRefused, exit.Silent)
}

// base reads the manifests --base names (none without it).
func (o *PlanOptions) base() ([]action.Manifest, error) {
	if len(o.Base) == 0 {
		return nil, nil
	}
	base, err := manifest.Read(o.Base, manifest.Options{Recursive: o.Recursive, Stdin: o.root.IOStreams.In})
	if err != nil {
		return nil, fmt.Errorf("--base: %w", err)
	}
	return manifests(base), nil
}

func (o *PlanOptions) print(fp *action.FilesPlan) error {
	if o.Output != "" {
		return printers.PrintObject(o.root.IOStreams.Out, o.Output, fp)
	}
	return writeFilesPlan(o.root.IOStreams.Out, fp)
}

// manifests are the set's packages as the plan takes them.
func manifests(set *manifest.Set) []action.Manifest {
	out := make([]action.Manifest, len(set.Packages))
	for i, p := range set.Packages {
		out[i] = action.Manifest{Where: p.Where(), Object: p.Unstructured}
	}
	return out
}
