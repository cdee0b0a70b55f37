package action

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/compare"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/flags"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
)

// Values of --assume-dependency-upgrades (Config.AssumeUpgrades): what a
// plan takes the package manager's dependency-upgrade flags to be, in
// place of reading them ("": read them).
var AssumeUpgrades = []string{"off", "upgrades", "downgrades"}

// CheckAssumeUpgrades refuses a value of --assume-dependency-upgrades
// that is none of AssumeUpgrades.
func CheckAssumeUpgrades(v string) error {
	if v == "" || slices.Contains(AssumeUpgrades, v) {
		return nil
	}
	return fmt.Errorf("--assume-dependency-upgrades must be off, upgrades or downgrades, not %q", v)
}

// crossplane is what plans know of the running Crossplane's
// configuration, read once: from its Deployment's arguments, as
// --assume-dependency-upgrades states it, or unknown (why says why).
func (c *Config) crossplane(ctx context.Context) diagnose.Crossplane {
	if c.xp != nil {
		return *c.xp
	}
	cp := diagnose.Crossplane{Config: flags.Defaults(), Read: diagnose.ConfigUnknown}
	var d *cluster.CrossplaneDeployment
	err := errOffline
	if !c.Offline && c.cluster != nil {
		d, err = c.cluster.Crossplane(ctx, c.XPNamespace)
	}
	switch {
	case err == nil:
		cp.Config, cp.Version, cp.Read = flags.Parse(d.Args, d.Env), d.Version, diagnose.ConfigRead
	case errors.Is(err, errOffline):
		cp.Why = "planned offline"
	case apierrors.IsNotFound(err):
		cp.Why = "no Deployment crossplane in " + c.XPNamespace + "; --crossplane-namespace names another"
	case apierrors.IsForbidden(err):
		cp.Why = "you may not read the Deployment crossplane in " + c.XPNamespace
	default:
		cp.Why = exit.Message(err)
	}
	if c.AssumeUpgrades != "" {
		cp.Read = diagnose.ConfigAssumed
		cp.DependencyUpgrades = c.AssumeUpgrades != "off"
		cp.DependencyDowngrades = c.AssumeUpgrades == "downgrades"
	}
	if ctx.Err() == nil {
		c.xp = &cp
	}
	return cp
}

// errOffline: an offline plan reads no Deployment.
var errOffline = errors.New("planned offline")

// lockState is the Lock and the package objects, as they are or as a
// change leaves them.
type lockState struct {
	lock    []installed.LockPackage
	objects []resolve.Object
}

// stateOf is the cluster's state as it is.
func stateOf(lock []installed.LockPackage, pkgs []*installed.Package) lockState {
	return lockState{lock: lock, objects: diagnose.Objects(pkgs)}
}

// with is s changed by entries, Lock entries of packages as a change
// leaves them (Name the package object's name, Type its kind). A package
// that exists moves to its entry's version: its entry of that source
// leaves the Lock and the new one is added at the end, as the package
// manager adds a new revision there; a new package's entry is added
// beside any other of its source (a twin, which the resolver refuses).
func (s lockState) with(entries ...installed.LockPackage) lockState {
	out := lockState{lock: slices.Clone(s.lock), objects: slices.Clone(s.objects)}
	for _, e := range entries {
		o := resolve.Object{Kind: e.Type, Name: e.Name, Repo: reference.Repository(e.Source), Version: e.Version}
		i := slices.IndexFunc(out.objects, func(x resolve.Object) bool { return x.Kind == o.Kind && x.Name == o.Name })
		if i >= 0 {
			old := out.objects[i].Repo
			out.lock = slices.DeleteFunc(out.lock, func(lp installed.LockPackage) bool { return installed.SameRepo(lp.Source, old) })
			out.objects[i] = o
		} else {
			out.objects = append(out.objects, o)
		}
		out.lock = append(out.lock, e)
	}
	return out
}

// predict is what the package manager does after a change that leaves
// the cluster in after (from before), its registries read with secrets.
func (c *Config) predict(ctx context.Context, secrets []string, before, after lockState) (*diagnose.Prediction, error) {
	reg, err := c.Registry(ctx)
	if err != nil {
		return nil, err
	}
	src := resolve.NewClosure(ctx, reg, secrets, c.Limits)
	p := diagnose.Predict(src, c.crossplane(ctx), after.lock, before.lock, after.objects, before.objects)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p, c.definitions(ctx, reg, secrets, p)
}

// definitions reads what each change of the resolver brings and drops of
// the cluster's API (the packages read a few at once), and counts the
// objects of what it drops: a kind a dependency's move removes deletes
// them (blocking), a version it drops breaks its clients.
func (c *Config) definitions(ctx context.Context, reg *resolve.Registry, secrets []string, p *diagnose.Prediction) error {
	changes := p.Resolution.Changes
	read := make([][2]diff.Definitions, len(changes))
	errs := make([]error, len(changes))
	var wg sync.WaitGroup
	limit := make(chan struct{}, definitionReads)
	for i, ch := range changes {
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			read[i][1], errs[i] = c.readDefinitions(ctx, reg, secrets, resolve.Ref(ch.Repository, ch.To))
			if errs[i] == nil && ch.From != "" {
				read[i][0], errs[i] = c.readDefinitions(ctx, reg, secrets, resolve.Ref(ch.Repository, ch.From))
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i := range changes {
		ch := &changes[i]
		if errs[i] != nil {
			ch.Definitions = &resolve.Definitions{Err: exit.Message(errs[i])}
			continue
		}
		from, to := read[i][0], read[i][1]
		d := &resolve.Definitions{}
		for _, name := range to.Names() {
			if _, ok := from[name]; !ok {
				d.Brings = append(d.Brings, name)
			}
		}
		losses := diagnose.RemovedKinds(from, to)
		d.Drops = slices.Sorted(maps.Keys(losses))
		ch.Definitions = d
		if len(losses) == 0 || c.Offline || c.cluster == nil {
			continue
		}
		crds, err := c.cluster.CRDs(ctx, d.Drops)
		if err != nil {
			return err
		}
		live, err := diagnose.LiveObjectFindings(ctx, c.cluster, crds, losses, fmt.Sprintf("%s at %s (the resolver's %s)", ch.Package, ch.To, ch.Action))
		if err != nil {
			return err
		}
		p.Note(live...)
	}
	return nil
}

// definitionReads is how many packages a prediction reads at once.
const definitionReads = 4

// readDefinitions reads a package's definitions where the package manager
// reads it.
func (c *Config) readDefinitions(ctx context.Context, reg *resolve.Registry, secrets []string, ref string) (diff.Definitions, error) {
	read, so, err := reg.LocateQuietly(ctx, ref, secrets)
	if err != nil {
		return nil, err
	}
	return compare.Definitions(ctx, read, so, c.Limits)
}
