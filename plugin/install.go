package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// InstallOptions holds the flags and state of `kubectl xpkg install`.
type InstallOptions struct {
	Spec        installed.InstallSpec
	Manual      bool
	Pin         bool
	Force       bool
	DryRun      string
	Output      string
	Wait        waitFlag
	Assume      AssumeFlag
	XPNamespace string
	Source      SourceFlags
	Cluster     ClusterFlags

	typedKind string
	ref       string
	root      *Root
}

// NewInstallOptions returns the options with their defaults.
func NewInstallOptions(genericiooptions.IOStreams) *InstallOptions {
	return &InstallOptions{XPNamespace: defaultXPNamespace}
}

// NewCmdInstall builds `kubectl xpkg install`.
func NewCmdInstall(root *Root) *cobra.Command {
	o := NewInstallOptions(root.IOStreams)
	cmd := &cobra.Command{
		Use:     "install [provider|configuration|function] PACKAGE [NAME]",
		Short:   "Install a package by creating its Provider, Configuration or Function",
		Long:    helpLong("install"),
		Example: helpExample("install"),
		GroupID: groupCluster,
		Args:    cobra.RangeArgs(0, 3),
		RunE:    runOptions(root, o),
	}
	o.addFlags(cmd)
	cmd.ValidArgsFunction = completeKinds
	completeOutput(cmd, "yaml", "json", "name")
	return cmd
}

func (o *InstallOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("revision-activation-policy", "", "Automatic or Manual activation of new revisions.")
	f.BoolVar(&o.Manual, "manual-activation", false, "Shorthand for --revision-activation-policy=Manual.")
	f.Int64("revision-history-limit", 0, "Inactive revisions to keep (0 keeps all).")
	f.StringSliceVar(&o.Spec.PullSecrets, "package-pull-secrets", nil, "Secrets in Crossplane's namespace to pull the package with.")
	f.String("package-pull-policy", "", "Always, IfNotPresent or Never.")
	f.String("runtime-config", "", "DeploymentRuntimeConfig for the provider's or function's runtime.")
	f.Bool("ignore-crossplane-constraints", false, "Install even if the package's crossplane version constraint excludes this Crossplane.")
	f.Bool("skip-dependency-resolution", false, "Do not install the package's dependencies.")
	f.StringToStringVar(&o.Spec.CommonLabels, "common-labels", nil, "Labels for every object the package installs, key=value,...")
	f.StringToStringVar(&o.Spec.CommonAnnotations, "common-annotations", nil, "Annotations for every object the package installs, key=value,...")
	f.StringVar(&o.Spec.Source, "source", "", "Crossplane v0.x: the registry to pull the package from.")
	f.StringVar(&o.Spec.CRD, "crd", "", "Crossplane v0.x: install the package that owns this CRD.")
	f.String("image-pull-policy", "", "Crossplane v0.x: the controller image pull policy.")
	f.StringToStringVar(&o.Spec.ServiceAccountAnnotations, "service-account-annotation", nil, "Crossplane v0.x: annotations for the controller's service account.")
	f.BoolVar(&o.Pin, "pin", false, "Pin the package by digest: resolve its tag now and write repository:tag@sha256:... to spec.package.")
	f.BoolVar(&o.Force, "force", false, "Install even when the plan has blocking findings (another package installs the same repository; a name the resolver would twin).")
	addDryRunFlag(f, &o.DryRun, "print the object without contacting the cluster", "have the API server check it without persisting it")
	f.StringVarP(&o.Output, "output", "o", "", "Print the object: yaml, json or name.")
	addWaitFlag(f, &o.Wait, "the package and its dependencies are installed and healthy")
	o.Assume.AddFlag(cmd)
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane and of --package-pull-secrets.")
	o.Source.AddFlags(f)
	o.Cluster.AddFlags(f)
}

// Complete reads the positional arguments and the flags the user set.
func (o *InstallOptions) Complete(root *Root, cmd *cobra.Command, args []string) error {
	o.root = root
	if len(args) > 0 && isKindWord(args[0]) && (len(args) > 1 || o.Spec.CRD != "") {
		o.typedKind, args = args[0], args[1:]
	}
	switch {
	case len(args) == 0 && o.Spec.CRD != "":
		o.Spec.Name = reference.DNSLabel(strings.Split(o.Spec.CRD, "/")[0])
	case len(args) == 1:
		o.ref = args[0]
	case len(args) == 2:
		o.ref, o.Spec.Name = args[0], args[1]
	default:
		return &exit.UsageError{Err: errors.New("install takes [KIND] PACKAGE [NAME], or [KIND] --crd CRD [NAME] for Crossplane v0.x"), Hint: "See 'kubectl xpkg install --help' for usage."}
	}
	o.Spec.Typed = o.ref
	f := cmd.Flags()
	o.Spec.ActivationPolicy = changedString(f, "revision-activation-policy")
	if o.Manual {
		manual := "Manual"
		o.Spec.ActivationPolicy = &manual
	}
	o.Spec.PullPolicy = changedString(f, "package-pull-policy")
	if p := changedString(f, "image-pull-policy"); p != nil {
		o.Spec.PullPolicy = p
	}
	o.Spec.RuntimeConfig = changedString(f, "runtime-config")
	if f.Changed("revision-history-limit") {
		v, _ := f.GetInt64("revision-history-limit")
		o.Spec.HistoryLimit = &v
	}
	o.Spec.IgnoreCrossplaneConstraints = changedBool(f, "ignore-crossplane-constraints")
	o.Spec.SkipDependencyResolution = changedBool(f, "skip-dependency-resolution")
	return nil
}

func isKindWord(s string) bool {
	switch strings.ToLower(strings.TrimSuffix(s, "s")) {
	case "provider", "configuration", "function", "clusterpackageinstall", "packageinstall", "clusterstackinstall", "stackinstall", "extensionrequest":
		return true
	}
	return false
}

// Validate checks values the API server would otherwise reject late.
func (o *InstallOptions) Validate() error {
	if p := o.Spec.ActivationPolicy; p != nil && *p != "Automatic" && *p != "Manual" {
		return fmt.Errorf("--revision-activation-policy must be Automatic or Manual, not %q", *p)
	}
	if p := o.Spec.PullPolicy; p != nil && *p != "Always" && *p != "IfNotPresent" && *p != "Never" {
		return fmt.Errorf("--package-pull-policy must be Always, IfNotPresent or Never, not %q", *p)
	}
	if err := checkDryRun(o.DryRun); err != nil {
		return err
	}
	if err := o.Assume.Validate(); err != nil {
		return err
	}
	if o.Wait.d > 0 && o.DryRun != dryRunNone {
		return errors.New("--wait cannot be combined with --dry-run")
	}
	return checkObjectOutput(o.Output)
}

// Run builds the package object and creates it, then waits as asked.
func (o *InstallOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	cfg.Offline = o.DryRun == dryRunClient // a client dry run asks no cluster
	cfg.AssumeUpgrades = o.Assume.Value
	in, err := action.NewInstall(ctx, cfg, o.Pin)
	if err != nil {
		return err
	}
	u, err := in.Build(ctx, &o.Spec, o.ref, o.typedKind)
	if err != nil {
		return err
	}
	if cfg.Offline {
		return printObject(o.root, o.Output, u, "created (dry run)")
	}
	if err := o.gate(ctx, in); err != nil {
		return err
	}
	return o.create(ctx, in, u)
}

// create creates the package object u, says so, and waits as asked.
func (o *InstallOptions) create(ctx context.Context, in *action.Install, u *unstructured.Unstructured) error {
	start := time.Now()
	p, already, err := in.Create(ctx, o.Spec, u, o.DryRun == dryRunServer)
	if err != nil {
		return err
	}
	if err := o.created(p, already); err != nil || o.Wait.d == 0 || o.DryRun == dryRunServer {
		return err
	}
	return in.Wait(ctx, o.Spec, o.Wait.d, start)
}

// gate prints the install's plan when it found something, and stops a
// blocking one (exit 3) unless --force.
func (o *InstallOptions) gate(ctx context.Context, in *action.Install) error {
	plan, err := in.Plan(ctx, o.Spec)
	if err != nil || (len(plan.Findings) == 0 && !plan.Predicts()) {
		return err
	}
	if err := writePlan(o.root.IOStreams.ErrOut, plan); err != nil {
		return err
	}
	return action.Gate(plan.Refused(), o.Force, o.root.events())
}

// created says what install did: created the object (printed as -o
// asks), or found the package installed already.
func (o *InstallOptions) created(p *installed.Package, already bool) error {
	switch {
	case already:
		fmt.Fprintf(o.root.IOStreams.ErrOut, "%s is already installed from %s: nothing to do\n", p.KindName(), o.Spec.Package)
		return nil
	case o.DryRun == dryRunServer:
		return printObject(o.root, o.Output, p.Object, "created (server dry run)")
	}
	return printObject(o.root, o.Output, p.Object, "created")
}
