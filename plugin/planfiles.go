package plugin

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/manifest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

var planExample = `  # What merging a pull request's package manifests will do to the cluster
  kubectl xpkg plan -f packages/ -R

  # Kustomize output, piped in
  kustomize build overlays/prod | kubectl xpkg plan -f -

  # The plan as one document, and uninstalls for packages the manifests leave out
  kubectl xpkg plan -f packages/ --prune -o json`

// PlanOptions holds the flags and state of `kubectl xpkg plan`.
type PlanOptions struct {
	Filenames   []string
	Recursive   bool
	Prune       bool
	Output      string
	XPNamespace string
	Source      SourceFlags
	Cluster     ClusterFlags
	root        *Root
}

// NewCmdPlan builds `kubectl xpkg plan -f`.
func NewCmdPlan(root *Root) *cobra.Command {
	o := &PlanOptions{root: root}
	cmd := &cobra.Command{
		Use:   "plan -f FILENAME",
		Short: "Plan what applying package manifests (a GitOps change) will do to the cluster",
		Long: `Plan reads package manifests as kubectl diff -f does (files, directories, -R, - for
stdin), takes every Provider, Configuration and Function in them (other objects are
ignored and counted), matches each to the cluster's package of its kind and name, and
plans the difference with the rules of the change it makes, as one set:

* a new spec.package: the upgrade (a rollback when older) exactly as upgrade --dry-run
  plans it, its dependents' constraints taken from the manifests where they change too;
* a new package: its install plan (a twin in the Lock, the target's validity and
  Crossplane constraint, its dependencies against the Lock the set leaves);
* another spec edit: listed, with what it does on the running Crossplane (from v2.4 a
  new revision, and under Manual activation a package that runs nothing until the new
  revision is activated);
* a package installed explicitly that no manifest names: said; with --prune, its
  uninstall is planned.

It changes nothing. Exit status: 0 when nothing blocks, 3 when a finding does, 1 when
the manifests or the cluster could not be read (one line per problem: a YAML error
with its file and line, a package defined twice, a package API the cluster does not
serve).`,
		Example: planExample,
		GroupID: groupCluster,
		Args:    exactArgs(0, "no arguments: name the manifests with -f"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "A file, a directory or - (stdin) of manifests; repeat for more.")
	f.BoolVarP(&o.Recursive, "recursive", "R", false, "Read the directories given with -f recursively.")
	f.BoolVar(&o.Prune, "prune", false, "Plan the uninstall of packages installed explicitly that no manifest names (as kubectl apply --prune).")
	f.StringVarP(&o.Output, "output", "o", "", "Print the plan as json or yaml (one document) instead of text.")
	completeOutput(cmd, "json", "yaml")
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
		return &exit.UsageError{Err: errors.New("name the manifests with -f FILENAME (a file, a directory or -)"), Hint: "See 'kubectl xpkg plan --help' for usage."}
	}
	return printers.CheckFormat(o.Output, printers.FormatJSON, printers.FormatYAML)
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
	fp, err := action.NewPlanFiles(cfg, o.Prune).Plan(ctx, manifests(set), set.Ignored)
	if err != nil {
		return err
	}
	if err := o.print(fp); err != nil {
		return err
	}
	if fp.Blocking() {
		return exit.WithCode(exit.PlanRefused, exit.Silent)
	}
	return nil
}

func (o *PlanOptions) print(fp *action.FilesPlan) error {
	if o.Output != "" {
		return printers.PrintObject(o.root.IOStreams.Out, o.Output, fp)
	}
	return action.WriteFilesPlan(o.root.IOStreams.Out, fp)
}

// manifests are the set's packages as the plan takes them.
func manifests(set *manifest.Set) []action.Manifest {
	out := make([]action.Manifest, len(set.Packages))
	for i, p := range set.Packages {
		out[i] = action.Manifest{Where: p.Where(), Object: p.Unstructured}
	}
	return out
}
