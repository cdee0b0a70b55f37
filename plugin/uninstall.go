package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/teardown"
)

// UninstallOptions holds the flags and state of `kubectl xpkg uninstall`.
type UninstallOptions struct {
	Yes      bool
	WithDeps bool
	// WithResources is --with-resources: delete or orphan.
	WithResources string
	Wait          waitFlag
	Plan          PlanFlags
	Cluster       ClusterFlags

	args []string
	root *Root
}

// NewUninstallOptions returns the options with their defaults.
func NewUninstallOptions(genericiooptions.IOStreams) *UninstallOptions { return &UninstallOptions{} }

// NewCmdUninstall builds `kubectl xpkg uninstall`.
func NewCmdUninstall(root *Root) *cobra.Command {
	o := NewUninstallOptions(root.IOStreams)
	cmd := &cobra.Command{
		Use:     "uninstall NAME|KIND/NAME...",
		Short:   "Uninstall packages, refusing to break their dependents or delete live objects",
		Long:    helpLong("uninstall"),
		Example: helpExample("uninstall"),
		GroupID: groupCluster,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exactArgs(1, "at least one NAME")(c, args)
			}
			return nil
		},
		RunE: runOptions(root, o),
	}
	f := cmd.Flags()
	o.Plan.AddFlags(cmd, "dependents, live objects")
	f.BoolVarP(&o.Yes, "yes", "y", false, "Do not ask for confirmation.")
	f.BoolVar(&o.WithDeps, "with-dependencies", false, "Also uninstall the dependencies the package manager installed that no other package needs.")
	f.StringVar(&o.WithResources, "with-resources", "", "Remove every object of the packages' kinds first, in the order that finishes (claims, composite resources, managed resources, ProviderConfigs), while their runtimes run: delete (each external resource goes or stays by its policies) or orphan (every external resource is kept). --wait bounds each stage (default 5m).")
	addWaitFlag(f, &o.Wait, "the packages and their revisions are gone")
	o.Cluster.AddFlags(f)
	cmd.ValidArgsFunction = completePackages(root, false, true)
	return cmd
}

// Complete reads the arguments.
func (o *UninstallOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root, o.args = root, args
	return nil
}

// Validate checks the flags.
func (o *UninstallOptions) Validate() error {
	if err := o.Plan.Validate(); err != nil {
		return err
	}
	if o.WithResources != "" && o.WithResources != teardown.ModeDelete && o.WithResources != teardown.ModeOrphan {
		return &exit.UsageError{Err: fmt.Errorf("--with-resources is delete or orphan, not %q", o.WithResources), Hint: "See 'kubectl xpkg uninstall --help' for usage."}
	}
	if o.Plan.DryRun != dryRunNone && o.Wait.d > 0 {
		return &exit.UsageError{Err: errors.New("--wait cannot be combined with --dry-run"), Hint: "See 'kubectl xpkg uninstall --help' for usage."}
	}
	return nil
}

// Run plans the removal, gates it, confirms it and carries it out.
func (o *UninstallOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, nil, "")
	if err != nil {
		return err
	}
	cfg.Events.Results = o.Plan.results(o.root)
	u, err := action.NewUninstall(cfg, o.WithDeps)
	if err != nil {
		return err
	}
	u.WithResources = o.WithResources
	plan, err := u.Plan(ctx, o.args)
	if err != nil {
		return err
	}
	if proceed, err := o.Plan.gate(o.root, plan.Plan); !proceed || err != nil {
		return err
	}
	if !o.confirm(plan.Packages) {
		return errors.New("uninstall cancelled")
	}
	return u.Apply(ctx, plan, o.options())
}

// options say how the packages are removed, each printed as it is.
func (o *UninstallOptions) options() action.UninstallOptions {
	out := o.Plan.results(o.root)
	suffix := "deleted"
	if o.Plan.DryRun == dryRunServer {
		suffix = "deleted (server dry run)"
	}
	return action.UninstallOptions{
		DryRun: o.Plan.DryRun == dryRunServer, Wait: o.Wait.d,
		Deleted: func(p *installed.Package) { fmt.Fprintf(out, "%s %s\n", p.KindName(), suffix) },
	}
}

// confirm asks on a terminal, unless --yes or --dry-run.
func (o *UninstallOptions) confirm(names []string) bool {
	q := fmt.Sprintf("Uninstall %s?", strings.Join(names, ", "))
	if o.WithResources != "" {
		q = fmt.Sprintf("Uninstall %s, with every object of their kinds (--with-resources=%s)?", strings.Join(names, ", "), o.WithResources)
	}
	return confirm(o.root, o.Yes || o.Plan.DryRun != dryRunNone, q)
}

// confirm asks question on a terminal and reads a yes; skip (--yes, a
// dry run) or no terminal says yes without asking.
func confirm(r *Root, skip bool, question string) bool {
	in, ok := r.IOStreams.In.(*os.File)
	if skip || !ok || !term.IsTerminal(int(in.Fd())) {
		return true
	}
	fmt.Fprintf(r.IOStreams.ErrOut, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}
