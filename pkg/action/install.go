package action

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/compare"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg/legacy"
)

// Install creates the package object that makes the package manager
// install a package.
type Install struct {
	Cluster *cluster.Cluster
	// Registry reads the package as the package manager will: through
	// the cluster's ImageConfigs, with the spec's pull secrets. Offline
	// (a client dry run, no cluster asked), it reads as the user would.
	Registry *resolve.Registry
	Limits   xpkg.Limits
	// Offline builds the object without asking the cluster.
	Offline bool
	// Open reads a package (and says so); default source.Open.
	Open func(ctx context.Context, ref string, o source.Options) (*source.Package, error)
	// Pin resolves the reference's tag to its digest and installs
	// repository:tag@digest.
	Pin bool
	// Events hear warnings and the waits.
	Events Events
	// Namespace is the kubeconfig's namespace (for the namespaced
	// requests of Crossplane v0.x).
	Namespace string

	// cfg predicts what the package manager does (nil: Plan does not;
	// plan -f predicts its set as one), and with it Plan reads the
	// target's definitions.
	cfg *Config
	// read is the target as plan -f read and validated it already: Plan
	// takes its definitions from it.
	read *xpkg.Checked
}

// NewInstall installs on cfg's cluster, reading packages through its
// registry; offline (cfg.Offline, a client dry run) it builds the object
// without asking the cluster, and reads packages as the user would.
func NewInstall(ctx context.Context, cfg *Config, pin bool) (*Install, error) {
	c, err := cfg.connect()
	if err != nil {
		return nil, err
	}
	ns, _, err := cfg.apiClients().Namespace()
	if err != nil {
		return nil, err
	}
	reg, err := cfg.Registry(ctx)
	if err != nil {
		return nil, err
	}
	return &Install{Cluster: c, Registry: reg, Limits: cfg.Limits, Offline: cfg.Offline, Pin: pin,
		Events: cfg.Events, Open: cfg.Open, Namespace: ns, cfg: cfg}, nil
}

// Build fills in spec from ref (Resolve) and builds the object that
// installs it.
func (i *Install) Build(ctx context.Context, spec *installed.InstallSpec, ref, typedKind string) (*unstructured.Unstructured, error) {
	spec.Namespace = i.Namespace
	if err := i.Resolve(ctx, spec, ref, typedKind); err != nil {
		return nil, err
	}
	return i.Cluster.Dialect().Build(*spec)
}

// Wait waits up to d until the package spec installed, and its
// dependencies, are installed and healthy and its definitions established
// (failures of definitions counted from since); the error carries its
// exit code.
func (i *Install) Wait(ctx context.Context, spec installed.InstallSpec, d time.Duration, since time.Time) error {
	p := &installed.Package{Kind: spec.Kind, Name: spec.Name}
	return changeError(ctx, waitInstalled(ctx, i.Cluster, p, d, since, false, i.Events))
}

// Resolve fills in the spec from the reference: the fully qualified
// package, the default name (Crossplane's own for a dependency), and the
// kind, read from the package when typedKind is empty.
func (i *Install) Resolve(ctx context.Context, spec *installed.InstallSpec, ref, typedKind string) error {
	if ref != "" {
		if _, err := os.Stat(ref); err == nil {
			return fmt.Errorf("%s is a local file or directory: Crossplane installs packages from a registry, so push it to one first and install that reference", ref)
		}
		r, err := source.ParseReference(ref, i.Registry.Source.Registry)
		if err != nil {
			return err
		}
		spec.Package = r.Name()
		if spec.Name == "" {
			spec.Name = reference.DefaultName(r)
		}
		if i.Pin {
			// The kind is then read from the content pinned.
			if spec.Package, err = i.Registry.Pin(ctx, spec.Package, i.secrets(spec)); err != nil {
				return err
			}
		}
	}
	d := i.Cluster.Dialect()
	switch {
	case typedKind != "":
		k, err := cluster.ResolveKind(d, typedKind)
		spec.Kind = k
		return err
	case ref == "": // --crd alone: the cluster-wide request
		spec.Kind = d.Kinds()[0]
		return nil
	}
	kind, err := i.packageKind(ctx, spec)
	if err != nil {
		return err
	}
	k, err := cluster.InstallKind(d, kind)
	if err != nil {
		return fmt.Errorf("%s: %w", spec.Package, err)
	}
	spec.Kind = k
	return nil
}

// packageKind reads the package's meta object for its kind, or for a
// legacy package the scope its app.yaml asks for.
func (i *Install) packageKind(ctx context.Context, spec *installed.InstallSpec) (string, error) {
	ref, so, err := i.Registry.Locate(ctx, spec.Package, i.secrets(spec))
	if err != nil {
		return "", err
	}
	open := i.Open
	if open == nil {
		open = source.Open
	}
	p, err := open(ctx, ref, so)
	if err != nil {
		return "", fmt.Errorf("read %s to learn its kind (or name the kind: install provider|configuration|function PACKAGE): %w", spec.Package, err)
	}
	defer p.Close()
	kind, err := readKind(p, i.Limits)
	if err == nil {
		// What the package manager would refuse (a bad tar entry after the
		// meta object, a digest mismatch) is refused here too.
		err = p.Close()
	}
	if err != nil {
		return "", fmt.Errorf("read %s to learn its kind: %w", spec.Package, err)
	}
	return kind, nil
}

// secrets are the spec's pull secrets, unless offline (they live in the
// cluster).
func (i *Install) secrets(spec *installed.InstallSpec) []string {
	if i.Offline {
		return nil
	}
	return spec.PullSecrets
}

func readKind(p *source.Package, limits xpkg.Limits) (string, error) {
	if p.Format != source.FormatLegacy {
		meta, err := xpkg.ParseMeta(p.Stream(), limits)
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

// Create creates the object (Plan checks it first); installed is set when
// the same package is installed under the name already (nothing was
// created). Another package under the name is an error.
func (i *Install) Create(ctx context.Context, spec installed.InstallSpec, u *unstructured.Unstructured, dryRun bool) (p *installed.Package, installed bool, err error) {
	if p, err := i.existing(ctx, spec); p != nil || err != nil {
		return p, p != nil, err
	}
	created, err := i.Cluster.Create(ctx, u, dryRun)
	if apierrors.IsAlreadyExists(err) {
		// Another install of the same name won the race since the check.
		if p, err := i.existing(ctx, spec); p != nil || err != nil {
			return p, p != nil, err
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("install %s: %w", specName(spec), err)
	}
	return created, false, nil
}

func specName(s installed.InstallSpec) string {
	return installed.KindName(s.Kind, s.Name)
}

// existing is the same package installed under the name (nil when there
// is none); another package there is an error.
func (i *Install) existing(ctx context.Context, spec installed.InstallSpec) (*installed.Package, error) {
	p, err := i.Cluster.Get(ctx, spec.Kind, spec.Name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case p.Source == spec.Package:
		return p, nil
	}
	return nil, fmt.Errorf("%s is already installed from %s: use 'kubectl xpkg upgrade %s' to change its package, or choose another NAME",
		specName(spec), p.Source, spec.Name)
}

// Plan checks what the install would do to the package manager's state:
// a second package of a repository another package installs already
// (twin-install), and a custom name for a repository installed packages
// depend on (twin-name); both end with two nodes for one source in the
// Lock, which then resolves no package's dependencies (doctor's
// duplicate-lock-node). What cannot be read is said, and the install
// is planned without it; the package under the name must be readable.
func (i *Install) Plan(ctx context.Context, spec installed.InstallSpec) (*Plan, error) {
	plan := NewPlan(ActionInstall, specName(spec)+" ("+spec.Package+")", "", "")
	repo := reference.Repository(spec.Package)
	// Another package under the name is an error, and the package there
	// already nothing to plan: Create says so.
	if p, err := i.existing(ctx, spec); p != nil || err != nil || repo == "" {
		return plan, err
	}
	pkgs, err := i.Cluster.List(ctx, "", "")
	if err != nil {
		i.Events.say("Warning: cannot check whether another package installs %s: %v", repo, err)
	}
	for _, p := range pkgs {
		if p.Name != spec.Name && installed.SameRepo(p.Source, repo) {
			plan.add(findings.Finding{Rule: findings.RuleTwinInstall, Severity: findings.Blocking, Object: p.KindName(),
				Message: fmt.Sprintf("%s is installed already as %s (%s): a second package of one repository puts two nodes for it in the Lock, and Crossplane then resolves no package's dependencies; use 'kubectl xpkg upgrade %s' to change its version, or pass --force to install it twice anyway",
					repo, p.KindName(), p.Source, p.KindName())})
		}
	}
	if f := i.twinName(ctx, spec, repo); f != nil {
		plan.add(*f)
	}
	if derr := i.planDefinitions(ctx, plan, spec); derr != nil {
		return nil, derr
	}
	if i.cfg == nil || err != nil {
		return plan, nil
	}
	return plan, i.predict(ctx, plan, spec, pkgs)
}

// planDefinitions: a definition the target defines whose CRD is being
// deleted blocks the install (definition-deleting); a provider's new
// definitions are MRDs, whose activation the plan says (activation). The
// target's definitions are those plan -f read, else read here (with a
// Config); a target that cannot be read is said, and planned without
// them.
func (i *Install) planDefinitions(ctx context.Context, plan *Plan, spec installed.InstallSpec) error {
	var names []string
	var meta *xpkg.Meta
	switch {
	case i.read != nil:
		names, meta = i.read.Definitions, i.read.Meta
	case i.cfg != nil:
		defs, m, err := i.definitions(ctx, spec)
		if err != nil {
			i.Events.say("Warning: cannot check whether a definition of %s is being deleted: %v", spec.Package, err)
			return nil
		}
		names, meta = defs.Names(), m
	}
	if len(names) == 0 {
		return nil
	}
	crds, err := i.Cluster.CRDs(ctx, names)
	switch {
	case apierrors.IsForbidden(err):
		i.Events.say("Warning: cannot check whether a definition of %s is being deleted: you may not read CustomResourceDefinitions", spec.Package)
		return nil
	case err != nil:
		return err
	}
	plan.add(diagnose.DeletingFindings(crds, names, spec.Package)...)
	brings := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return crds[n] != nil })
	return planActivation(ctx, i.Cluster, plan, meta, brings, spec.Package)
}

// definitions reads the target's definitions where the package manager
// reads it.
func (i *Install) definitions(ctx context.Context, spec installed.InstallSpec) (diff.Definitions, *xpkg.Meta, error) {
	ref, so, err := i.Registry.Locate(ctx, spec.Package, i.secrets(&spec))
	if err != nil {
		return nil, nil, err
	}
	return compare.DefinitionsAndMeta(ctx, ref, so, i.Limits)
}

// predict adds to an install's plan what the package manager then does:
// the dependencies it installs or moves, and whether the Lock resolves.
func (i *Install) predict(ctx context.Context, plan *Plan, spec installed.InstallSpec, pkgs []*installed.Package) error {
	mr := i.Registry.ReadMeta(ctx, spec.Package, i.secrets(&spec), resolve.MetaOptions{Limits: i.Limits})
	if mr.Meta == nil && mr.Err != "" {
		plan.add(findings.Finding{Rule: findings.RuleLockStall, Severity: findings.Warning, Object: spec.Package,
			Message: fmt.Sprintf("%s %s: what the package manager does with its dependencies is not known", spec.Package, mr.Err)})
		return nil
	}
	lock, _, err := i.Cluster.LockState(ctx)
	if err != nil {
		return err
	}
	before := diagnose.StateOf(lock, pkgs)
	after := before.With(lockEntry(&installed.Package{Kind: spec.Kind, Name: spec.Name}, spec.Package, mr.Meta))
	pred, err := i.cfg.predict(ctx, i.secrets(&spec), before, after)
	if err != nil {
		return err
	}
	plan.Prediction = pred
	plan.add(pred.Findings(specName(spec))...)
	return nil
}

// twinName: a custom name for a repository that installed packages depend
// on. The resolver installs the dependency under its own name whenever
// the Lock has no entry for the repository (during this package's next
// upgrade, say): a twin, two Lock nodes, every package unhealthy.
func (i *Install) twinName(ctx context.Context, spec installed.InstallSpec, repo string) *findings.Finding {
	want := diagnose.ResolverName(repo)
	if want == "" || spec.Name == want {
		return nil
	}
	lock, err := i.Cluster.Lock(ctx)
	if err != nil {
		i.Events.say("Warning: cannot check whether installed packages depend on %s: %v", repo, err)
		return nil
	}
	deps := installed.Dependents(lock, repo)
	if len(deps) == 0 {
		return nil
	}
	var by []string
	for _, d := range deps {
		by = append(by, d.Name)
	}
	return &findings.Finding{Rule: findings.RuleTwinName, Severity: findings.Blocking, Object: specName(spec),
		Message: fmt.Sprintf("installed packages depend on %s (the revisions %s), and Crossplane's resolver names it %s: under the name %s it installs a twin whenever the Lock has no entry for it (on the next upgrade, say), and the Lock then holds two nodes for it; install it as %s, or pass --force",
			repo, strings.Join(by, ", "), want, spec.Name, want)}
}
