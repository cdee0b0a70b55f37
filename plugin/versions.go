package plugin

import (
	"context"
	"fmt"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// VersionsOptions holds the flags and state of `kubectl xpkg versions`.
type VersionsOptions struct {
	Pre         bool
	Constraint  string
	Output      string
	Source      SourceFlags
	Cluster     ClusterFlags
	XPNamespace string
	repo        string
	root        *Root
}

// NewCmdVersions builds `kubectl xpkg versions`.
func NewCmdVersions(root *Root) *cobra.Command {
	o := &VersionsOptions{root: root}
	cmd := &cobra.Command{
		Use:     "versions REPOSITORY",
		Short:   "List a package repository's versions, newest first, marking the installed one",
		Long:    helpLong("versions"),
		Example: helpExample("versions"),
		GroupID: groupLocal,
		Args:    exactArgs(1, "REPOSITORY"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.BoolVar(&o.Pre, "pre", false, "Include pre-release versions.")
	f.StringVar(&o.Constraint, "constraint", "", "Only the versions this semver range admits, e.g. '>=0.9 <1'.")
	f.StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: a table).")
	completeOutput(cmd, "json", "yaml")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane and of the pull secrets its ImageConfigs name.")
	o.Source.AddRegistryFlags(f)
	o.Cluster.AddFlags(f)
	return cmd
}

// Complete keeps the argument.
func (o *VersionsOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root, o.repo = root, args[0]
	return nil
}

// Validate checks the flags.
func (o *VersionsOptions) Validate() error { return printers.CheckFormat(o.Output) }

// Run lists, orders, filters and marks the tags.
func (o *VersionsOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	v := action.NewVersions(cfg)
	v.Constraint, v.Pre = o.Constraint, o.Pre
	report, err := v.Run(ctx, o.repo)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printers.PrintObject(o.root.IOStreams.Out, o.Output, report)
	}
	if len(report) == 0 {
		fmt.Fprintln(o.root.IOStreams.ErrOut, "No versions found.")
		return nil
	}
	t := printers.NewTable("VERSION", "INSTALLED")
	for _, r := range report {
		t.Row(r.Tag, orEmpty(r.Installed))
	}
	return t.Render(o.root.IOStreams.Out)
}

func orEmpty(s []string) string { return strings.Join(s, ", ") }
