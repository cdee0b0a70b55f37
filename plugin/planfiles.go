package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/manifest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

var planExample = `  # What merging a pull request's package manifests will do to the cluster
  kubectl xpkg plan -f packages/ -R

  # One manifest: the provider's move, planned as upgrade --dry-run plans it
  kubectl xpkg plan -f packages/provider-nop.yaml

  # The plan as one document, and uninstalls for packages the manifests leave out
  kubectl xpkg plan -f packages/ --prune -o json

  # In CI, without a cluster: a pull request's manifests against the target branch's
  kubectl xpkg plan -f packages/ -R --offline --base base/packages/`

// PlanOptions holds the flags and state of `kubectl xpkg plan`.
type PlanOptions struct {
	Filenames   []string
	Recursive   bool
	Prune       bool
	Offline     bool
	Base        []string
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
serve).

With --offline no cluster is asked (a CI job on a pull request, without its
credentials): the manifests are planned against each other, the registries, and the
previous manifests --base names (the target branch's checkout; same forms as -f, -R
applies to both), matched by kind and name. A new spec.package is planned with what
the two packages tell (stored versions a CRD's storage version loses, breaking
changes, validity, downgrade), the constraints of the manifests' packages on it and
its dependencies against the manifests (one in none: its registry must have a
matching version); a package not in --base as an install; one in --base and in no
manifest is said (a GitOps prune would uninstall it). What only the cluster can tell
(live objects of a dropped kind or version, the running Crossplane) is said once
(offline). Without --base every package is new.

Rules of its own (the others are upgrade's, rollback's and install's):
` + findings.RulesHelp(action.ActionPlanFiles),
		Example: planExample,
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
	pf := action.NewPlanFiles(cfg, o.Prune)
	if len(o.Base) > 0 {
		base, err := manifest.Read(o.Base, manifest.Options{Recursive: o.Recursive, Stdin: o.root.IOStreams.In})
		if err != nil {
			return fmt.Errorf("--base: %w", err)
		}
		pf.Base = manifests(base)
	}
	fp, err := pf.Plan(ctx, manifests(set), set.Ignored)
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
