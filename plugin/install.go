package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/lifecycle"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg/legacy"
)

var installExample = `  # Install a provider; its kind is read from the package, its name is Crossplane's own
  kubectl xpkg install xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0 --wait

  # Install a configuration under a name, activating new revisions by hand
  kubectl xpkg install configuration crossplane-contrib/configuration-aws-network:v0.23.0 network --manual-activation

  # Write the object for GitOps instead of creating it
  kubectl xpkg install provider crossplane-contrib/provider-nop:v0.4.0 --dry-run=client -o yaml > provider.yaml`

// InstallOptions holds the flags and state of `kubectl xpkg install`.
type InstallOptions struct {
	Spec        cluster.InstallSpec
	Manual      bool
	DryRun      string
	Output      string
	Wait        waitFlag
	XPNamespace string
	Source      SourceFlags
	Cluster     ClusterFlags

	typedKind string
	ref       string
	root      *Root
	cmd       *cobra.Command
}

// NewCmdInstall builds `kubectl xpkg install`.
func NewCmdInstall(root *Root) *cobra.Command {
	o := &InstallOptions{root: root}
	cmd := &cobra.Command{
		Use:   "install [provider|configuration|function] PACKAGE [NAME]",
		Short: "Install a package by creating its Provider, Configuration or Function",
		Long: `Install creates the package object that makes Crossplane's package manager install a
package. The kind is read from the package itself when it is not given; NAME defaults to
the name Crossplane gives the package when it installs it as a dependency (the
repository path as a DNS label). Only the fields you set are sent: the API server
defaults the rest. With --wait, install watches the package, its revision and its
dependencies until all are installed and healthy.`,
		Example: installExample,
		GroupID: groupCluster,
		Args:    cobra.RangeArgs(0, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmd = cmd
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
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
	f.StringVar(&o.DryRun, "dry-run", "none", `"client" prints the object without contacting the cluster, "server" has the API server check it without persisting it.`)
	f.Lookup("dry-run").NoOptDefVal = "client"
	f.StringVarP(&o.Output, "output", "o", "", "Print the object: yaml, json or name.")
	addWaitFlag(f, &o.Wait, "the package and its dependencies are installed and healthy")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", "crossplane-system", "Namespace of Crossplane and of --package-pull-secrets.")
	o.Source.AddFlags(f)
	o.Cluster.AddFlags(f)
}

// Complete reads the positional arguments and the flags the user set.
func (o *InstallOptions) Complete(args []string) error {
	if len(args) > 0 && isKindWord(args[0]) && (len(args) > 1 || o.Spec.CRD != "") {
		o.typedKind, args = args[0], args[1:]
	}
	switch {
	case len(args) == 0 && o.Spec.CRD != "":
		o.Spec.Name = cluster.DNSLabel(strings.Split(o.Spec.CRD, "/")[0])
	case len(args) == 1:
		o.ref = args[0]
	case len(args) == 2:
		o.ref, o.Spec.Name = args[0], args[1]
	default:
		return &exit.UsageError{Err: errors.New("install takes [KIND] PACKAGE [NAME], or [KIND] --crd CRD [NAME] for Crossplane v0.x"), Hint: "See 'kubectl xpkg install --help' for usage."}
	}
	o.Spec.Typed = o.ref
	f := o.cmd.Flags()
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
	switch o.DryRun {
	case "none", "client", "server":
	default:
		return fmt.Errorf(`--dry-run must be "none", "client" or "server", not %q`, o.DryRun)
	}
	if o.Wait.d > 0 && o.DryRun != "none" {
		return errors.New("--wait cannot be combined with --dry-run")
	}
	return checkObjectOutput(o.Output)
}

// Run installs the package.
func (o *InstallOptions) Run(ctx context.Context) error {
	so, limits, err := o.Source.Options()
	if err != nil {
		return err
	}
	if o.ref != "" {
		if _, err := os.Stat(o.ref); err == nil {
			return fmt.Errorf("%s is a local file or directory: Crossplane installs packages from a registry, so push it to one first and install that reference", o.ref)
		}
		ref, err := source.ParseReference(o.ref, so.Registry)
		if err != nil {
			return err
		}
		o.Spec.Package = ref.Name()
		if o.Spec.Name == "" {
			o.Spec.Name = cluster.DefaultName(ref)
		}
	}
	c, err := o.connect()
	if err != nil {
		return err
	}
	if o.Spec.Namespace, _, err = o.root.Clients().Namespace(); err != nil {
		return err
	}
	if err := o.resolveKind(ctx, c, so, limits); err != nil {
		return err
	}
	u, err := c.Dialect().Build(o.Spec)
	if err != nil {
		return err
	}
	if o.DryRun == "client" {
		return printObject(o.root, o.Output, u, "created (dry run)")
	}
	return o.create(ctx, c, u)
}

// connect talks to the cluster, except for a client dry run without
// --api-group, which prints the newest generation's object without any API
// call.
func (o *InstallOptions) connect() (*cluster.Cluster, error) {
	if o.DryRun == "client" && o.Cluster.APIGroup == "" {
		return cluster.NewCluster(nil, cluster.StaticDialect(), ""), nil
	}
	return o.Cluster.connect(o.root)
}

// resolveKind reads the package's meta object when no kind was typed.
func (o *InstallOptions) resolveKind(ctx context.Context, c *cluster.Cluster, so source.Options, limits xpkg.Limits) error {
	if o.typedKind != "" {
		k, err := cluster.ResolveKind(c.Dialect(), o.typedKind)
		o.Spec.Kind = k
		return err
	}
	if o.ref == "" { // --crd alone: the cluster-wide request
		o.Spec.Kind = c.Dialect().Kinds()[0]
		return nil
	}
	if len(o.Spec.PullSecrets) > 0 && o.DryRun != "client" {
		kc, err := c.PullSecretKeychain(ctx, o.XPNamespace, o.Spec.PullSecrets)
		if err != nil {
			return err
		}
		so.Keychain = authn.NewMultiKeychain(kc, authn.DefaultKeychain)
	}
	p, err := openPackage(ctx, o.root, o.Spec.Package, so)
	if err != nil {
		return fmt.Errorf("read %s to learn its kind (or name the kind: install provider|configuration|function PACKAGE): %w", o.Spec.Package, err)
	}
	defer p.Close()
	kind, err := packageKind(p, limits)
	if err == nil {
		// What the package manager would refuse (a bad tar entry after the
		// meta object, a digest mismatch) is refused here too.
		err = p.Close()
	}
	if err != nil {
		return fmt.Errorf("read %s to learn its kind: %w", o.Spec.Package, err)
	}
	k, err := cluster.InstallKind(c.Dialect(), kind)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Spec.Package, err)
	}
	o.Spec.Kind = k
	return nil
}

// packageKind is the meta object's kind, or for a legacy package the scope
// its app.yaml asks for (Cluster or Namespaced).
func packageKind(p *source.Package, limits xpkg.Limits) (string, error) {
	if p.Format != source.FormatLegacy {
		meta, err := xpkg.ReadMeta(p.Stream(), limits)
		if err != nil {
			return "", p.Cause(err)
		}
		return meta.Kind, nil
	}
	res, err := legacy.Translate(p.Legacy(), legacy.Options{Image: p.Reference})
	if err != nil {
		return "", err
	}
	scope, _, _ := unstructured.NestedString(res.Package.Object, "spec", "permissionScope")
	return "scope:" + scope, nil
}

func (o *InstallOptions) create(ctx context.Context, c *cluster.Cluster, u *unstructured.Unstructured) error {
	o.warnCustomName(ctx, c)
	if done, err := o.existing(ctx, c); done || err != nil {
		return err
	}
	start := time.Now()
	created, err := c.Create(ctx, u, o.DryRun == "server")
	if apierrors.IsAlreadyExists(err) {
		// Another install of the same name won the race since the check.
		if done, err := o.existing(ctx, c); done || err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("install %s/%s: %w", strings.ToLower(o.Spec.Kind), o.Spec.Name, err)
	}
	suffix := "created"
	if o.DryRun == "server" {
		suffix = "created (server dry run)"
	}
	if err := printObject(o.root, o.Output, created.Object, suffix); err != nil {
		return err
	}
	if o.DryRun == "server" {
		return nil
	}
	return o.wait(ctx, c, start)
}

// existing handles a package already installed under the name: the same
// package is done (done is true, after any wait), another one an error.
func (o *InstallOptions) existing(ctx context.Context, c *cluster.Cluster) (done bool, err error) {
	p, err := c.Get(ctx, o.Spec.Kind, o.Spec.Name)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	case p.Source == o.Spec.Package:
		fmt.Fprintf(o.root.IOStreams.ErrOut, "%s/%s is already installed from %s: nothing to do\n", strings.ToLower(o.Spec.Kind), o.Spec.Name, o.Spec.Package)
		return true, o.wait(ctx, c, time.Now())
	}
	return false, fmt.Errorf("%s/%s is already installed from %s: use 'kubectl xpkg upgrade %s' to change its package, or choose another NAME",
		strings.ToLower(o.Spec.Kind), o.Spec.Name, p.Source, o.Spec.Name)
}

func (o *InstallOptions) wait(ctx context.Context, c *cluster.Cluster, since time.Time) error {
	if o.Wait.d == 0 {
		return nil
	}
	p := &cluster.Package{Kind: o.Spec.Kind, Name: o.Spec.Name}
	return changeError(ctx, lifecycle.WaitInstalled(ctx, c, p, o.Wait.d, since, o.root.IOStreams.ErrOut))
}

// warnCustomName warns before a custom name creates the duplicate Crossplane
// makes on the next upgrade when another package depends on this one.
func (o *InstallOptions) warnCustomName(ctx context.Context, c *cluster.Cluster) {
	ref, err := source.ParseReference(o.Spec.Package, "")
	if err != nil || o.Spec.Name == cluster.DefaultName(ref) {
		return
	}
	lock, err := c.Lock(ctx)
	if err != nil {
		return
	}
	if deps := cluster.Dependents(lock, ref.Context().Name()); len(deps) > 0 {
		fmt.Fprintf(o.root.IOStreams.ErrOut, "Warning: %s depends on %s; Crossplane names its dependencies %q, so under the name %q it will install a duplicate on the next upgrade\n",
			deps[0].Name, ref.Context().Name(), cluster.DefaultName(ref), o.Spec.Name)
	}
}
