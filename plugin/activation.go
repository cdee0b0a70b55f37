package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// NewCmdActivation builds `kubectl xpkg activation`, whose verbs work on
// the activation of managed resource kinds.
func NewCmdActivation(root *Root) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "activation",
		Short:   "Plan which managed resource kinds to activate (ManagedResourceActivationPolicy)",
		Long:    helpLong("activation"),
		Example: helpExample("activation"),
		GroupID: groupCluster,
		Args:    exactArgs(0, "no arguments but a verb: kubectl xpkg activation plan"),
		RunE:    func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.AddCommand(newCmdActivationPlan(root))
	return cmd
}

// ActivationPlanOptions holds the flags and state of `kubectl xpkg
// activation plan`.
type ActivationPlanOptions struct {
	Filenames []string
	Recursive bool
	OnlyFiles bool
	Name      string
	Output    string
	Cluster   ClusterFlags
	root      *Root
}

func newCmdActivationPlan(root *Root) *cobra.Command {
	o := &ActivationPlanOptions{root: root}
	cmd := &cobra.Command{
		Use:     "plan [-f FILENAME]",
		Short:   "Print the smallest ManagedResourceActivationPolicy that activates the kinds the cluster's Compositions and objects need",
		Long:    helpLong("activation-plan"),
		Example: templates.Examples(helpExample("activation-plan")),
		Args:    exactArgs(0, "no arguments: name more Compositions with -f"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "A file, a directory or - (stdin) of Compositions to plan for too, e.g. a Git checkout; repeat for more.")
	f.BoolVarP(&o.Recursive, "recursive", "R", false, "Read the directories given with -f recursively.")
	f.BoolVar(&o.OnlyFiles, "only-files", false, "Plan for the Compositions of -f alone (and the objects there are), not those in the cluster.")
	f.StringVar(&o.Name, "name", "planned-activations", "The name of the ManagedResourceActivationPolicy printed.")
	f.StringVarP(&o.Output, "output", "o", "", "Print the whole plan (policy, needs, figures) as json or yaml instead of the commented policy.")
	completeOutput(cmd, "json", "yaml")
	o.Cluster.AddFlags(f)
	return cmd
}

// Complete keeps the root.
func (o *ActivationPlanOptions) Complete(root *Root, _ *cobra.Command, _ []string) error {
	o.root = root
	return nil
}

// Validate checks the flags.
func (o *ActivationPlanOptions) Validate() error {
	if o.OnlyFiles && len(o.Filenames) == 0 {
		return &exit.UsageError{Err: errors.New("--only-files plans for the Compositions of -f: name them with -f FILENAME"), Hint: "See 'kubectl xpkg activation plan --help' for usage."}
	}
	return printers.CheckFormat(o.Output, printers.FormatJSON, printers.FormatYAML)
}

// Run plans and prints the policy.
func (o *ActivationPlanOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, nil, "")
	if err != nil {
		return err
	}
	a := action.NewActivationPlan(cfg)
	a.Files, a.Recursive, a.Stdin, a.NoClusterCompositions = o.Filenames, o.Recursive, o.root.IOStreams.In, o.OnlyFiles
	p, err := a.Run(ctx)
	if err != nil {
		return err
	}
	out := o.root.IOStreams.Out
	if o.Output != "" {
		return printers.PrintObject(out, o.Output, activationReport{Policy: p.Policy(o.Name), Plan: p})
	}
	return printPolicy(out, p, o.Name)
}

// activationReport is the plan as -o prints it: the policy to apply (null
// when nothing is needed), then how it was found.
type activationReport struct {
	Policy map[string]any `json:"policy"`
	*activation.Plan
}

// printPolicy prints the policy as YAML, ready for kubectl apply or Git,
// with what the plan found above it as comments; with nothing needed,
// the comments alone.
func printPolicy(out io.Writer, p *activation.Plan, name string) error {
	for _, l := range p.Lines() {
		if _, err := fmt.Fprintln(out, "# "+l); err != nil {
			return err
		}
	}
	policy := p.Policy(name)
	if policy == nil {
		return nil
	}
	return printers.PrintObject(out, printers.FormatYAML, policy)
}
