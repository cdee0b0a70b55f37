package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

var renameExample = `  # The plan: what the package installed, what depends on it, and the steps
  kubectl xpkg rename provider/family-aws --dry-run

  # Give a package the name Crossplane's resolver gives its repository
  kubectl xpkg rename provider/family-aws --yes

  # Another name (refused when other packages depend on it)
  kubectl xpkg rename function/fn-go-templating function-go-templating --yes`

// DefaultRenameTimeout bounds a rename: every wait in it, each package's
// runtime stopping and starting.
const DefaultRenameTimeout = 10 * time.Minute

// RenameOptions holds the flags and state of `kubectl xpkg rename`.
type RenameOptions struct {
	Yes         bool
	Undo        bool
	Timeout     time.Duration
	XPNamespace string
	Plan        PlanFlags
	Cluster     ClusterFlags

	arg, to string
	root    *Root
}

// NewRenameOptions returns the options with their defaults.
func NewRenameOptions(genericiooptions.IOStreams) *RenameOptions {
	return &RenameOptions{XPNamespace: defaultXPNamespace, Timeout: DefaultRenameTimeout}
}

// NewCmdRename builds `kubectl xpkg rename`.
func NewCmdRename(root *Root) *cobra.Command {
	o := NewRenameOptions(root.IOStreams)
	cmd := &cobra.Command{
		Use:   "rename NAME|KIND/NAME [NEW-NAME]",
		Short: "Give a package another name, by default its resolver name, keeping every object it installed",
		Long: `Rename gives an installed package another name: by default the one Crossplane's
resolver derives from its repository (the repository path as a DNS label), under which
it installs the package as a dependency. A package others depend on, under another name,
gets a twin from the resolver whenever the Lock has no entry for it (kubectl xpkg doctor's
twin-name), and two packages of one source take every package down.

Crossplane hands control of an object only between revisions of one package (v2.4), or
not at all while a revision holds it (v2.3), and refuses two packages of one source in
the Lock. So rename, in this order:

* creates the new package paused (crossplane.io/paused), with the old one's spec:
   the package manager makes no revision of it, and the resolver finds the name taken;
* pauses the old package and deactivates its revision, which leaves the Lock, stops
   its runtime and releases control of what it installed (its owner reference stays:
   nothing is deleted); rename releases what the revision's status.objectRefs misses.
   Paused, not set to Manual activation: on v2.4 the edit that sets Manual makes
   another revision, which enters the Lock beside the running one;
* unpauses the new package and waits until it is installed and healthy, its revision
   controls every object the old one controlled, the Lock holds it once, and every
   dependent is healthy;
* makes the new package an owner of what only older revisions owned, deletes the old
   package, and checks that every object it installed, and every live object of their
   kinds, is still there.

A step that fails (or Ctrl-C, or --timeout) undoes the steps before it, in reverse: the
old package active and healthy again, then the new one deleted; exit status 1 (124 on
a time-out, 4 when another writer changed an object under it, 5 when the undo fails
too). Once the old package is being deleted there is
nothing to undo. While it waits, rename reads both packages every second and stops at
once (undoing first, exit status 4) when another writer unpauses, deletes or edits one.

Before each step rename records it on both packages, in the annotation
kubectl-xpkg.github.io/operation (the operation, its id, both packages, the step). A
rename killed mid-way (SIGKILL, a closed CI runner) leaves that record: kubectl xpkg
doctor names it (unfinished-operation), and the same command run again finishes it,
each step finding done what the run cut short did; with --undo it undoes it instead.

Nothing is changed before the rename is planned; a blocking finding stops it with exit
status 3 unless --force. The rules:

` + findings.RulesHelp(action.ActionRename) + `

Doctor's blocking findings about the Lock as a whole (duplicate-lock-node,
dependency-unresolved), and about the package or what it installed (control-conflict,
stored-version-undefined, objects-missing), stop it too: the rename ends by waiting
for the Lock to hold the new package.

On a terminal, rename asks before changing anything unless --yes. --dry-run prints the
plan and exits as the rename would; --dry-run=server has the API server check the new
package and the old one's pause too.`,
		Example: renameExample,
		GroupID: groupCluster,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				return exactArgs(1, "NAME, and at most a NEW-NAME")(c, args)
			}
			return nil
		},
		RunE: runOptions(root, o),
	}
	f := cmd.Flags()
	o.Plan.AddFlags(cmd, "a state that proves nothing, a taken name, an unknown Crossplane release, a GitOps tool")
	f.BoolVarP(&o.Yes, "yes", "y", false, "Do not ask for confirmation.")
	f.BoolVar(&o.Undo, "undo", false, "Undo the rename a run cut short left recorded on the package, instead of finishing it.")
	f.DurationVar(&o.Timeout, "timeout", DefaultRenameTimeout, "How long the whole rename may take, its waits included; past it the rename is undone.")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane and of the packages' runtimes.")
	o.Cluster.AddFlags(f)
	pkgs := completePackages(root, false, true)
	cmd.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp // NEW-NAME: a name of your own
		}
		return pkgs(c, args, toComplete)
	}
	return cmd
}

// Complete reads the arguments.
func (o *RenameOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root, o.arg = root, args[0]
	if len(args) == 2 {
		o.to = args[1]
	}
	return nil
}

// Validate checks the flags.
func (o *RenameOptions) Validate() error {
	if err := o.Plan.Validate(); err != nil {
		return err
	}
	if o.Timeout <= 0 {
		return &exit.UsageError{Err: errors.New("--timeout must be more than 0"), Hint: "See 'kubectl xpkg rename --help' for usage."}
	}
	return nil
}

// Run plans the rename, gates it, confirms it and carries it out.
func (o *RenameOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, nil, o.XPNamespace)
	if err != nil {
		return err
	}
	rn := action.NewRename(cfg)
	rn.To, rn.Timeout, rn.DryRun, rn.Undo = o.to, o.Timeout, o.Plan.DryRun == dryRunServer, o.Undo
	plan, err := rn.Plan(ctx, o.arg)
	if err != nil || plan == nil {
		return err
	}
	if err := o.show(plan); err != nil {
		return err
	}
	if err := action.Gate(plan.Refused(), o.Plan.Force, o.root.IOStreams.ErrOut); err != nil || o.Plan.DryRun == dryRunClient {
		return err
	}
	question := fmt.Sprintf("Rename %s to %s?", plan.Package, plan.To)
	switch {
	case plan.Resume != nil && plan.Undo:
		question = fmt.Sprintf("Undo the rename of %s to %s?", plan.Package, plan.To)
	case plan.Resume != nil:
		question = fmt.Sprintf("Finish the rename of %s to %s?", plan.Package, plan.To)
	}
	if !confirm(o.root, o.Yes || o.Plan.DryRun != dryRunNone, question) {
		return errors.New("rename cancelled")
	}
	res, err := rn.Apply(ctx, plan)
	if err != nil {
		return err
	}
	out := o.Plan.results(o.root)
	if res.DryRun {
		fmt.Fprintf(out, "%s would be renamed to %s (server dry run: the new package and the pause checked; nothing changed)\n", res.From, res.To)
		return nil
	}
	if res.LeftOver {
		fmt.Fprintf(out, "rename of %s to %s finished: %s was deleted already, and %s is installed and healthy\n", res.From, res.To, res.From, res.To)
		return nil
	}
	if res.Undone {
		fmt.Fprintf(out, "rename of %s to %s undone: %s is installed and healthy under its name again, and %s is gone\n", res.From, res.To, res.From, res.To)
		return nil
	}
	fmt.Fprintf(out, "%s renamed to %s: %d objects handed over, %d live objects of their kinds kept\n", res.From, res.To, res.Objects, res.Live)
	return nil
}

// show prints the plan: as a document to stdout with -o, as text to
// stdout on a dry run and to stderr otherwise.
func (o *RenameOptions) show(plan *action.RenamePlan) error {
	if o.Plan.Output != "" {
		return printers.PrintObject(o.root.IOStreams.Out, o.Plan.Output, plan)
	}
	var w io.Writer = o.root.IOStreams.ErrOut
	if o.Plan.DryRun != dryRunNone {
		w = o.root.IOStreams.Out
	}
	return action.WriteRenamePlan(w, plan)
}
