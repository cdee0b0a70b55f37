package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
)

var uninstallExample = `  # Uninstall a configuration, waiting until its revisions are gone
  kubectl xpkg uninstall configuration-aws-network --wait

  # Also remove the dependencies nothing else needs (Crossplane never removes them)
  kubectl xpkg uninstall configuration/configuration-aws-network --with-dependencies --yes

  # See what would be removed
  kubectl xpkg uninstall configuration-aws-network --with-dependencies --dry-run`

// UninstallOptions holds the flags and state of `kubectl xpkg uninstall`.
type UninstallOptions struct {
	Force    bool
	DryRun   bool
	Yes      bool
	WithDeps bool
	Wait     waitFlag
	Cluster  ClusterFlags
	root     *Root
}

// NewCmdUninstall builds `kubectl xpkg uninstall`.
func NewCmdUninstall(root *Root) *cobra.Command {
	o := &UninstallOptions{root: root}
	cmd := &cobra.Command{
		Use:   "uninstall NAME|KIND/NAME...",
		Short: "Uninstall packages, refusing to break the packages that depend on them",
		Long: `Uninstall deletes package objects; Crossplane's garbage collection removes their
revisions and the objects they installed. A package that another installed package
depends on (according to the Lock) is kept unless --force. Crossplane never removes
dependencies: --with-dependencies also removes those that nothing else needs, listing
them first. On a terminal, uninstall asks before deleting unless --yes.`,
		Example: uninstallExample,
		GroupID: groupCluster,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exactArgs(1, "at least one NAME")(c, args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), args) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.Force, "force", false, "Uninstall even if other packages depend on it.")
	f.BoolVar(&o.DryRun, "dry-run", false, "Show what would be deleted; the API server checks the deletes without making them.")
	f.BoolVarP(&o.Yes, "yes", "y", false, "Do not ask for confirmation.")
	f.BoolVar(&o.WithDeps, "with-dependencies", false, "Also uninstall the dependencies that no other package needs.")
	addWaitFlag(f, &o.Wait, "the packages and their revisions are gone")
	o.Cluster.AddFlags(f)
	cmd.ValidArgsFunction = completePackages(root, false, true)
	return cmd
}

// Run plans the removal, checks it, confirms it and carries it out.
func (o *UninstallOptions) Run(ctx context.Context, args []string) error {
	c, err := o.Cluster.connect(o.root)
	if err != nil {
		return err
	}
	named, err := o.plan(ctx, c, args)
	if err != nil {
		return err
	}
	var deps []*cluster.Package
	if o.WithDeps {
		lock, err := c.Lock(ctx)
		if err != nil {
			return err
		}
		if deps, err = o.dependencies(ctx, c, lock, named); err != nil {
			return err
		}
	}
	if !o.confirm(append(slices.Clone(named), deps...)) {
		return errors.New("uninstall cancelled")
	}
	if err := o.delete(ctx, c, named); err != nil {
		return err
	}
	if len(deps) > 0 && !o.DryRun {
		// The package manager re-installs a dependency that a package it
		// still knows needs: remove the dependencies only once their
		// dependents, and their Lock entries, are gone.
		fmt.Fprintln(o.root.IOStreams.ErrOut, "Waiting for the packages to go before removing their dependencies")
		if err := o.wait(ctx, c, named, max(o.Wait.d, DefaultWait)); err != nil {
			return err
		}
	}
	if err := o.delete(ctx, c, deps); err != nil {
		return err
	}
	if o.Wait.d == 0 || o.DryRun {
		return nil
	}
	if len(deps) > 0 {
		return o.wait(ctx, c, deps, o.Wait.d) // the named ones are gone already
	}
	return o.wait(ctx, c, named, o.Wait.d)
}

func (o *UninstallOptions) delete(ctx context.Context, c *cluster.Cluster, pkgs []*cluster.Package) error {
	for _, p := range pkgs {
		if err := c.Delete(ctx, p, o.DryRun); err != nil {
			return fmt.Errorf("uninstall %s/%s: %w", strings.ToLower(p.Kind), p.Name, err)
		}
		suffix := "deleted"
		if o.DryRun {
			suffix = "deleted (server dry run)"
		}
		fmt.Fprintf(o.root.IOStreams.Out, "%s/%s %s\n", strings.ToLower(p.Kind), p.Name, suffix)
	}
	return nil
}

func (o *UninstallOptions) wait(ctx context.Context, c *cluster.Cluster, pkgs []*cluster.Package, d time.Duration) error {
	for _, p := range pkgs {
		if err := c.WaitDeleted(ctx, p, d, o.root.IOStreams.ErrOut); err != nil {
			return waitError(err)
		}
	}
	return nil
}

// plan resolves the arguments and refuses to break dependents.
func (o *UninstallOptions) plan(ctx context.Context, c *cluster.Cluster, args []string) ([]*cluster.Package, error) {
	var targets []*cluster.Package
	for _, a := range args {
		kind, name, err := resolveKindName(ctx, c, a)
		if err != nil {
			return nil, err
		}
		p, err := c.Get(ctx, kind, name)
		if err != nil {
			return nil, err
		}
		targets = append(targets, p)
	}
	lock, err := c.Lock(ctx)
	if err != nil {
		return nil, err
	}
	if err := o.checkDependents(lock, targets); err != nil {
		return nil, err
	}
	return targets, nil
}

func (o *UninstallOptions) checkDependents(lock []cluster.LockPackage, targets []*cluster.Package) error {
	removing := map[string]bool{}
	for _, t := range targets {
		removing[cluster.RefRepository(t.Source)] = true
	}
	for _, t := range targets {
		var users []string
		for _, d := range cluster.Dependents(lock, cluster.RefRepository(t.Source)) {
			if !removing[cluster.RefRepository(d.Source)] {
				users = append(users, d.Source+" "+d.Version)
			}
		}
		if len(users) == 0 {
			continue
		}
		msg := fmt.Sprintf("%s/%s is a dependency of %s", strings.ToLower(t.Kind), t.Name, strings.Join(users, ", "))
		if !o.Force {
			them := "it"
			if len(users) > 1 {
				them = "them"
			}
			return fmt.Errorf("%s: uninstall %s first, or pass --force to break %s", msg, them, them)
		}
		fmt.Fprintf(o.root.IOStreams.ErrOut, "Warning: %s; uninstalling it anyway (--force)\n", msg)
	}
	return nil
}

// dependencies are those of targets that nothing else needs.
func (o *UninstallOptions) dependencies(ctx context.Context, c *cluster.Cluster, lock []cluster.LockPackage, targets []*cluster.Package) ([]*cluster.Package, error) {
	all, err := c.List(ctx, "", "")
	if err != nil {
		return nil, err
	}
	var deps []*cluster.Package
	for _, t := range targets {
		for _, repo := range cluster.ExclusiveDependencies(lock, cluster.RefRepository(t.Source)) {
			i := slices.IndexFunc(all, func(p *cluster.Package) bool { return cluster.RefRepository(p.Source) == repo })
			if i < 0 || slices.ContainsFunc(append(slices.Clone(targets), deps...), func(p *cluster.Package) bool { return p.Name == all[i].Name && p.Kind == all[i].Kind }) {
				continue
			}
			fmt.Fprintf(o.root.IOStreams.ErrOut, "%s/%s (%s) is needed by nothing else: uninstalling it too\n", strings.ToLower(all[i].Kind), all[i].Name, repo)
			deps = append(deps, all[i])
		}
	}
	return deps, nil
}

// confirm asks on a terminal, unless --yes or --dry-run.
func (o *UninstallOptions) confirm(targets []*cluster.Package) bool {
	in, ok := o.root.IOStreams.In.(*os.File)
	if o.Yes || o.DryRun || !ok || !term.IsTerminal(int(in.Fd())) {
		return true
	}
	var names []string
	for _, t := range targets {
		names = append(names, strings.ToLower(t.Kind)+"/"+t.Name)
	}
	fmt.Fprintf(o.root.IOStreams.ErrOut, "Uninstall %s? [y/N] ", strings.Join(names, ", "))
	answer, _ := bufio.NewReader(in).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}
