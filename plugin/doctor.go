package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

var doctorExample = `  # Check the package manager's state: exit 3 when something takes packages down
  kubectl xpkg doctor

  # The findings as one document, for scripts
  kubectl xpkg doctor -o json

  # Show what doctor would repair, and change nothing
  kubectl xpkg doctor --fix --dry-run

  # Repair what it can prove, without asking, saving what it changes first
  kubectl xpkg doctor --fix --yes --backup before-repair.yaml

  # Before upgrading Crossplane to v2.4.2: what that release would do to this cluster
  kubectl xpkg doctor --crossplane-version v2.4.2`

// DoctorOptions holds the flags and state of `kubectl xpkg doctor`.
type DoctorOptions struct {
	Output string
	Fix    bool
	Yes    bool
	DryRun string
	Backup string
	Wait   time.Duration
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
		Use:   "doctor",
		Short: "Find what keeps packages from installing: duplicate Lock nodes, unresolved dependencies, contested definitions",
		Long: `Doctor reads the package manager's state once (every package, every revision, the
Lock, every CRD and MRD without their schemas and every DeploymentRuntimeConfig: one
list per kind, the CRDs' in pages of 500; nothing per package, revision or CRD) and
reports what keeps packages from installing, as a plan reports findings: each with a
stable rule, a severity and a message that names the objects and the way out. Without
--fix it changes nothing. The rules:

` + findings.RulesHelp(action.ActionDoctor) + `

With --fix, doctor also repairs what it can prove from what it read, and nothing else:
the revisions behind duplicate Lock nodes that are not their package's current revision
(and not active), Lock entries whose revision no longer exists, and controller
references of definitions to revisions that no longer exist. It prints the repair,
asks on a terminal (unless --yes), writes every object it will change or delete to a
new YAML file (--backup; kubectl apply -f takes it back; it never replaces anything: a
path that exists, even an earlier backup, is refused before doctor starts), then makes
each step, reading the cluster and planning the repair again just before it, with the
object's UID (and a revision's resourceVersion) as preconditions. Another writer's change to an object
since the plan stops the repair with exit status 4; what was done is said. Then it
waits (--wait) for the package manager to take the repair in and reports again.
Every other finding stays, with the steps to take by hand. --dry-run prints the repair
and changes nothing (=server: the API server checks each step without making it).

--crossplane-version VERSION checks, before Crossplane itself is upgraded, what that
release would do to this cluster: the running release (the Deployment crossplane in
--crossplane-namespace) and the target head the report. It blocks a downgrade, a
skipped minor version, a known-bad release this cluster triggers and a core CRD
that stores a version the target no longer defines; it names the packages that get
a new revision and a restarted runtime, those under Manual activation that go
offline, those that can get a twin, and those whose Crossplane constraint excludes
the target (read from each package's image; --offline reads no registry and says
so). What its release table does not know of a release it says, and checks the rest.


Exit status: 0 when nothing is found (or, after --fix, nothing blocking is left), 3
when a blocking finding is (is left), 4 when another writer stopped the repair, 1
when something could not be read (RBAC, say): the findings it could make are printed,
then one error line per thing it could not read; a partial reading is never reported
healthy.`,
		Example: doctorExample,
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
	if !o.Fix && (o.Yes || o.DryRun != dryRunNone || o.Backup != "") {
		return &exit.UsageError{Err: errors.New("--yes, --dry-run and --backup go with --fix"), Hint: "See 'kubectl xpkg doctor --help' for usage."}
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
	if o.Fix {
		return o.fix(ctx, d)
	}
	d.CrossplaneVersion, d.NoRegistry = o.CrossplaneVersion, o.Offline
	rep, err := d.Run(ctx)
	if err != nil {
		return err
	}
	if err := o.print(rep); err != nil {
		return err
	}
	return doctorStatus(rep)
}

// print prints a report: with -o as one document, else as text with its
// repair, if any.
func (o *DoctorOptions) print(rep *action.Report) error {
	out := o.root.IOStreams.Out
	if o.Output != "" {
		return printers.PrintObject(out, o.Output, rep)
	}
	if err := action.WriteReport(out, rep); err != nil {
		return err
	}
	if rep.Repair == nil || rep.Healthy() {
		return nil
	}
	return action.WriteRepair(out, rep.Repair)
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
