package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// DoctorOptions holds the flags and state of `kubectl xpkg doctor`.
type DoctorOptions struct {
	Output string
	Fix    bool
	Yes    bool
	DryRun string
	Backup string
	Wait   time.Duration
	// OrphanExternal: --orphan-external-resources.
	OrphanExternal bool
	// CrossplaneVersion is the release of Crossplane to check an upgrade
	// to; Offline reads no registry for it.
	CrossplaneVersion string
	Offline           bool
	XPNamespace       string
	Source            SourceFlags
	Cluster           ClusterFlags
	Fleet             FleetFlags
	root              *Root
}

// NewCmdDoctor builds `kubectl xpkg doctor`.
func NewCmdDoctor(root *Root) *cobra.Command {
	o := &DoctorOptions{root: root}
	cmd := &cobra.Command{
		Use:     "doctor",
		Short:   "Find what keeps packages from installing: duplicate Lock nodes, unresolved dependencies, contested definitions",
		Long:    helpLong("doctor"),
		Example: helpExample("doctor"),
		GroupID: groupCluster,
		Args:    exactArgs(0, "no arguments"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: text).")
	completeOutput(cmd, "json", "yaml")
	f.BoolVar(&o.Fix, "fix", false, "Repair what doctor can prove safe to change (see above).")
	f.BoolVarP(&o.Yes, "yes", "y", false, "With --fix: do not ask for confirmation.")
	addDryRunFlag(f, &o.DryRun, "with --fix, print the repair and change nothing", "with --fix, have the API server check each step without making it")
	f.StringVar(&o.Backup, "backup", "", "With --fix: the new file to save the objects it changes to; refused if the path exists (default: doctor-backup-TIME.yaml in the current directory).")
	f.DurationVar(&o.Wait, "wait", action.DefaultRepairSettle, "With --fix: how long to wait for the package manager to take the repair in before reporting again.")
	f.BoolVar(&o.OrphanExternal, "orphan-external-resources", false, "With --fix: end the deletion of a definition whose provider is not installed by removing its objects' finalizers, leaving what they manage (listed first) in place and unmanaged.")
	f.StringVar(&o.CrossplaneVersion, "crossplane-version", "", "Also check an upgrade of Crossplane to this release (MAJOR.MINOR.PATCH, with or without v).")
	f.BoolVar(&o.Offline, "offline", false, "With --crossplane-version: read no registry (the packages' Crossplane constraints are then not checked).")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane (its Deployment) and of the packages' pull secrets.")
	o.Source.AddRegistryFlags(f)
	o.Cluster.AddFlags(f)
	o.Fleet.AddFlags(f)
	return cmd
}

// Complete keeps the root.
func (o *DoctorOptions) Complete(root *Root, _ *cobra.Command, _ []string) error {
	o.root = root
	return nil
}

// Validate checks the flags.
func (o *DoctorOptions) Validate() error {
	if err := checkDryRun(o.DryRun); err != nil {
		return err
	}
	if !o.Fix && (o.Yes || o.DryRun != dryRunNone || o.Backup != "" || o.OrphanExternal) {
		return &exit.UsageError{Err: errors.New("--yes, --dry-run, --backup and --orphan-external-resources go with --fix"), Hint: "See 'kubectl xpkg doctor --help' for usage."}
	}
	if err := checkBackup(o.Backup); err != nil {
		return err
	}
	if o.Fix && o.CrossplaneVersion != "" {
		return &exit.UsageError{Err: errors.New("--fix repairs the cluster as it is: check a Crossplane upgrade (--crossplane-version) apart"), Hint: "See 'kubectl xpkg doctor --help' for usage."}
	}
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
	fleet, err := o.root.fleet(&o.Fleet, &o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	if fleet != nil {
		return o.runFleet(ctx, fleet)
	}
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	d := action.NewDoctor(cfg)
	d.OrphanExternal = o.OrphanExternal
	if o.Fix {
		return o.fix(ctx, d)
	}
	d.CrossplaneVersion, d.NoRegistry = o.CrossplaneVersion, o.Offline
	rep, err := d.Run(ctx)
	if err != nil {
		return err
	}
	return cmp.Or(o.print(rep), doctorStatus(rep))
}

// print prints a report: with -o as one document, else as text with its
// repair, if any.
func (o *DoctorOptions) print(rep *action.Report) error {
	out := o.root.IOStreams.Out
	if o.Output != "" {
		return printers.PrintObject(out, o.Output, rep)
	}
	if err := writeReport(out, rep); err != nil {
		return err
	}
	if rep.Repair == nil || rep.Healthy() {
		return nil
	}
	return writeRepair(out, rep.Repair)
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
