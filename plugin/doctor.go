package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

var doctorExample = `  # Check the package manager's state: exit 3 when something takes packages down
  kubectl xpkg doctor

  # The findings as one document, for scripts
  kubectl xpkg doctor -o json

  # Before upgrading Crossplane to v2.4.2: what that release would do to this cluster
  kubectl xpkg doctor --crossplane-version v2.4.2`

// DoctorOptions holds the flags and state of `kubectl xpkg doctor`.
type DoctorOptions struct {
	Output string
	// CrossplaneVersion is the release of Crossplane to check an upgrade
	// to; Offline reads no registry for it.
	CrossplaneVersion string
	Offline           bool
	XPNamespace       string
	Source            SourceFlags
	Cluster           ClusterFlags
	root              *Root
}

// NewCmdDoctor builds `kubectl xpkg doctor`.
func NewCmdDoctor(root *Root) *cobra.Command {
	o := &DoctorOptions{root: root}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Find what keeps packages from installing: duplicate Lock nodes, unresolved dependencies, stale entries",
		Long: `Doctor reads the package manager's state once (every package, every revision and the
Lock: one request per kind, however many there are) and reports what keeps packages
from installing, as a plan reports findings: each with a stable rule, a severity and a
message that names the objects and the way out. It changes nothing. The rules:

` + action.RulesHelp(action.ActionDoctor) + `

Exit status: 0 when nothing is found, 3 when a blocking finding is, 1 when something
could not be read (RBAC, say): the findings it could make are printed, then one error
line per thing it could not read; a partial reading is never reported healthy.

--crossplane-version VERSION checks, before Crossplane itself is upgraded, what that
release would do to this cluster: the running release (the Deployment crossplane in
--crossplane-namespace) and the target head the report. It blocks a downgrade, a
skipped minor version, a known-bad release this cluster triggers and a core CRD
that stores a version the target no longer defines; it names the packages that get
a new revision and a restarted runtime, those under Manual activation that go
offline, those that can get a twin, and those whose Crossplane constraint excludes
the target (read from each package's image; --offline reads no registry and says
so). What its release table does not know of a release it says, and checks the rest.`,
		Example: doctorExample,
		GroupID: groupCluster,
		Args:    exactArgs(0, "no arguments"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: text).")
	completeOutput(cmd, "json", "yaml")
	f.StringVar(&o.CrossplaneVersion, "crossplane-version", "", "Also check an upgrade of Crossplane to this release (MAJOR.MINOR.PATCH, with or without v).")
	f.BoolVar(&o.Offline, "offline", false, "With --crossplane-version: read no registry (the packages' Crossplane constraints are then not checked).")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane (its Deployment) and of the packages' pull secrets.")
	o.Source.AddRegistryFlags(f)
	o.Cluster.AddFlags(f)
	return cmd
}

// Complete keeps the root.
func (o *DoctorOptions) Complete(root *Root, _ *cobra.Command, _ []string) error {
	o.root = root
	return nil
}

// Validate checks the flags.
func (o *DoctorOptions) Validate() error {
	if o.CrossplaneVersion != "" {
		if err := action.ValidateCrossplaneVersion(o.CrossplaneVersion); err != nil {
			return &exit.UsageError{Err: fmt.Errorf("--crossplane-version: %w", err), Hint: "See 'kubectl xpkg doctor --help' for usage."}
		}
	} else if o.Offline {
		return &exit.UsageError{Err: errors.New("--offline goes with --crossplane-version: doctor reads no registry otherwise"), Hint: "See 'kubectl xpkg doctor --help' for usage."}
	}
	return printers.CheckFormat(o.Output, printers.FormatJSON, printers.FormatYAML)
}

// Run examines the cluster, prints the report and exits by it.
func (o *DoctorOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	d := action.NewDoctor(cfg)
	d.CrossplaneVersion, d.NoRegistry = o.CrossplaneVersion, o.Offline
	rep, err := d.Run(ctx)
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
