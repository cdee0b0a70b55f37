package plugin

import (
	"context"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/deptree"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// TreeOptions holds the flags and state of `kubectl xpkg tree`.
type TreeOptions struct {
	Output  string
	Cluster ClusterFlags
	name    string
	root    *Root
}

// NewCmdTree builds `kubectl xpkg tree`.
func NewCmdTree(root *Root) *cobra.Command {
	o := &TreeOptions{root: root}
	cmd := &cobra.Command{
		Use:     "tree [NAME]",
		Short:   "Show the dependency tree of installed packages, with versions and health",
		Example: helpExample("tree"),
		GroupID: groupCluster,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runOptions(root, o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: dot, json or yaml (default: a tree).")
	cmd.ValidArgsFunction = completePackages(root, false, false)
	completeOutput(cmd, "dot", "json", "yaml")
	o.Cluster.AddFlags(cmd.Flags())
	return cmd
}

// Complete keeps the argument, if any.
func (o *TreeOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root = root
	if len(args) == 1 {
		o.name = args[0]
	}
	return nil
}

// Validate checks the flags.
func (o *TreeOptions) Validate() error {
	return printers.CheckFormat(o.Output, "dot", printers.FormatJSON, printers.FormatYAML)
}

// Run reads the Lock and the packages and prints the tree.
func (o *TreeOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, nil, "")
	if err != nil {
		return err
	}
	roots, err := action.Tree(ctx, cfg, o.name)
	if err != nil {
		return err
	}
	out := o.root.IOStreams.Out
	switch o.Output {
	case "dot":
		return deptree.WriteDot(out, roots)
	case "":
		return deptree.WriteText(out, roots)
	}
	return printers.PrintObject(out, o.Output, roots)
}
