package plugin

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/compare"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// DiffOptions holds the flags and state of `kubectl xpkg diff`.
type DiffOptions struct {
	Output       string
	BreakingOnly bool
	Stat         bool
	Color        string
	Installed    string
	Pre          bool
	XPNamespace  string
	Source       SourceFlags
	Cluster      ClusterFlags

	args []string
	root *Root
	cmd  *cobra.Command
}

// NewCmdDiff builds `kubectl xpkg diff`.
func NewCmdDiff(root *Root) *cobra.Command {
	o := &DiffOptions{root: root}
	cmd := &cobra.Command{
		Use:     "diff OLD NEW | --installed NAME NEW",
		Short:   "Compare two packages semantically and say which changes break an upgrade",
		Long:    helpLong("diff"),
		Example: helpExample("diff"),
		GroupID: groupLocal,
		Args: func(c *cobra.Command, args []string) error {
			want := exactArgs(2, "OLD and NEW")
			if o.Installed != "" {
				want = exactArgs(1, "NEW")
			}
			return exit.WithCode(exit.DiffTrouble, want(c, args))
		},
		RunE: runOptions(root, o),
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit.WithCode(exit.DiffTrouble, flagError(c, err))
	})
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: a human report).")
	completeOutput(cmd, "json", "yaml")
	f.BoolVar(&o.BreakingOnly, "breaking-only", false, "Show only breaking changes (the exit status still counts every change).")
	f.BoolVar(&o.Stat, "stat", false, "Show only the summary and one line per object.")
	f.StringVar(&o.Color, "color", "auto", "Colour the report: auto (on a terminal, unless NO_COLOR is set), always or never.")
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	f.StringVar(&o.Installed, "installed", "", "Compare the current revision of this installed package (NAME or KIND/NAME) with NEW.")
	f.BoolVar(&o.Pre, "pre", false, "With --installed and a semver range as NEW, consider pre-release versions.")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane's pull secrets (those of --installed's package and of ImageConfigs).")
	o.Source.AddFlags(f)
	o.Cluster.AddFlags(f)
	return cmd
}

// Complete keeps the arguments.
func (o *DiffOptions) Complete(root *Root, cmd *cobra.Command, args []string) error {
	o.root, o.args, o.cmd = root, args, cmd
	return nil
}

// Validate checks the flags; a bad one is trouble (exit 2), as for diff(1).
func (o *DiffOptions) Validate() error { return exit.WithCode(exit.DiffTrouble, o.checkFlags()) }

func (o *DiffOptions) checkFlags() error {
	switch o.Color {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("--color %q: want auto, always or never", o.Color)
	}
	if o.Stat && o.Output != "" {
		return fmt.Errorf("--stat and -o %s cannot be combined", o.Output)
	}
	return printers.CheckFormat(o.Output)
}

// Run reads both packages, compares them and reports.
func (o *DiffOptions) Run(ctx context.Context) error {
	so, limits, err := o.Source.Options()
	if err != nil {
		return exit.WithCode(exit.DiffTrouble, err)
	}
	args, opts, err := o.sources(ctx, so)
	if err != nil {
		return exit.WithCode(exit.DiffTrouble, err)
	}
	r, err := comparePackages(ctx, o.root, args, opts, limits)
	if err != nil {
		return exit.WithCode(exit.DiffTrouble, err)
	}
	if err := o.print(r); err != nil {
		return exit.WithCode(exit.DiffTrouble, err)
	}
	switch {
	case r.Breaking():
		return exit.WithCode(exit.DiffBreaking, exit.Silent)
	case r.Different():
		return exit.WithCode(exit.DiffDifferent, exit.Silent)
	}
	return nil
}

// sources are what to read for OLD and NEW, and how: with --installed,
// the installed package's image and NEW in its repository, read as the
// package manager reads them; else the two arguments, read as the user
// would unless the command line names a cluster.
func (o *DiffOptions) sources(ctx context.Context, so source.Options) ([2]string, [2]source.Options, error) {
	var args [2]string
	var opts [2]source.Options
	newArg := o.args[len(o.args)-1]
	var locate func(ctx context.Context, ref string) (string, source.Options, error)
	if o.Installed != "" {
		cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
		if err != nil {
			return args, opts, err
		}
		in, err := cfg.ReadPackage(ctx, o.Installed)
		if err != nil {
			return args, opts, err
		}
		if newArg, err = o.candidate(ctx, in, newArg); err != nil {
			return args, opts, err
		}
		args[0], locate = in.Image, in.Locate
	} else {
		reg, err := localRegistry(ctx, o.root, o.cmd, &o.Cluster, &o.Source, so, o.XPNamespace)
		if err != nil {
			return args, opts, err
		}
		args[0] = o.args[0]
		locate = func(ctx context.Context, ref string) (string, source.Options, error) {
			return reg.Locate(ctx, ref, nil)
		}
	}
	args[1] = newArg
	for i, a := range args {
		if _, err := os.Stat(a); err == nil { // a local source is read as it is
			opts[i] = so
			continue
		}
		var err error
		if args[i], opts[i], err = locate(ctx, a); err != nil {
			return args, opts, err
		}
	}
	return args, opts, nil
}

// candidate reads NEW beside --installed: a source that exists locally or
// names a repository is taken as it is; a bare version, range or digest
// is looked up in the installed package's repository.
func (o *DiffOptions) candidate(ctx context.Context, in *action.Installed, arg string) (string, error) {
	if _, err := os.Stat(arg); err == nil || strings.ContainsAny(arg, "/") {
		return arg, nil
	}
	return in.Target(ctx, arg, o.Pre)
}

func (o *DiffOptions) print(r *diff.Report) error {
	if o.BreakingOnly {
		r = r.BreakingOnly()
	}
	out := o.root.IOStreams.Out
	if o.Output != "" {
		return printers.PrintObject(out, o.Output, r)
	}
	return diff.WriteText(out, r, diff.TextOptions{Color: o.colour(), Stat: o.Stat})
}

// colour follows --color; auto means stdout is a terminal and neither
// NO_COLOR (https://no-color.org) nor TERM=dumb says otherwise.
func (o *DiffOptions) colour() bool {
	switch o.Color {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := o.root.IOStreams.Out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// comparePackages reads both packages at once as streams, says what it
// read, and compares them.
func comparePackages(ctx context.Context, root *Root, args [2]string, opts [2]source.Options, limits xpkg.Limits) (*diff.Report, error) {
	r, infos, err := compare.Stream(ctx, args, opts, limits)
	if err != nil {
		return nil, err
	}
	for _, i := range infos {
		fmt.Fprintln(root.IOStreams.ErrOut, i.Describe())
	}
	return r, nil
}
