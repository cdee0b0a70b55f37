package plugin

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

var doctorExample = `  # Check the package manager's state: exit 3 when something takes packages down
  kubectl xpkg doctor

  # The findings as one document, for scripts
  kubectl xpkg doctor -o json`

// DoctorOptions holds the flags and state of `kubectl xpkg doctor`.
type DoctorOptions struct {
	Output      string
	XPNamespace string
	Cluster     ClusterFlags
	root        *Root
}

// NewCmdDoctor builds `kubectl xpkg doctor`.
func NewCmdDoctor(root *Root) *cobra.Command {
	o := &DoctorOptions{root: root}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Find what keeps packages from installing: duplicate Lock nodes, unresolved dependencies, contested definitions",
		Long: `Doctor reads the package manager's state once (every package, every revision, the
Lock, every CRD and MRD without their schemas and every DeploymentRuntimeConfig: one
request per kind, however many there are) and reports what keeps packages from
installing, as a plan reports findings: each with a stable rule, a severity and a
message that names the objects and the way out. It changes nothing. The rules:

` + action.RulesHelp(action.ActionDoctor) + `

Exit status: 0 when nothing is found, 3 when a blocking finding is, 1 when something
could not be read (RBAC, say): the findings it could make are printed, then one error
line per thing it could not read; a partial reading is never reported healthy.`,
		Example: doctorExample,
		GroupID: groupCluster,
		Args:    exactArgs(0, "no arguments"),
		RunE:    runOptions(root, o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: text).")
	completeOutput(cmd, "json", "yaml")
	cmd.Flags().StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane, whose version some rules depend on (read only when one does).")
	o.Cluster.AddFlags(cmd.Flags())
	return cmd
}

// Complete keeps the root.
func (o *DoctorOptions) Complete(root *Root, _ *cobra.Command, _ []string) error {
	o.root = root
	return nil
}

// Validate checks the flags.
func (o *DoctorOptions) Validate() error {
	return printers.CheckFormat(o.Output, printers.FormatJSON, printers.FormatYAML)
}

// Run examines the cluster, prints the report and exits by it.
func (o *DoctorOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, nil, o.XPNamespace)
	if err != nil {
		return err
	}
	rep, err := action.NewDoctor(cfg).Run(ctx)
	if err != nil {
		return err
	}
	out := o.root.IOStreams.Out
	if o.Output == "" {
		err = action.WriteReport(out, rep)
	} else {
		err = printers.PrintObject(out, o.Output, rep)
	}
	if err != nil {
		return err
	}
	return doctorStatus(rep)
}

// doctorStatus is the exit of a report: what could not be read first
// (exit 1, one error line each), then a blocking finding (3).
func doctorStatus(rep *action.Report) error {
	if len(rep.Unread) > 0 {
		var errs exit.Several
		for _, u := range rep.Unread {
			errs = append(errs, errors.New("doctor is incomplete: "+u))
		}
		return exit.WithCode(exit.Unread, errs)
	}
	if rep.Blocking() {
		return exit.WithCode(exit.DoctorBlocking, exit.Silent)
	}
	return nil
}
