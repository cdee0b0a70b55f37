package action

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/compare"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
)

// crossplane is what plans know of the running Crossplane's
// configuration, read once: from its Deployment's arguments, as
// --assume-dependency-upgrades states it, or unknown.
func (c *Config) crossplane(ctx context.Context) diagnose.Crossplane {
	if c.xp != nil {
		return *c.xp
	}
	var d *cluster.CrossplaneDeployment
	err := diagnose.ErrOffline
	if !c.Offline && c.cluster != nil {
		d, err = c.cluster.Crossplane(ctx, c.XPNamespace)
	}
	cp := diagnose.CrossplaneOf(d, err, c.XPNamespace, c.AssumeUpgrades)
	if ctx.Err() == nil {
		c.xp = &cp
	}
	return cp
}

// predict is what the package manager does after a change that leaves
// the cluster in after (from before), its registries read with secrets.
func (c *Config) predict(ctx context.Context, secrets []string, before, after diagnose.LockState) (*diagnose.Prediction, error) {
	reg, err := c.Registry(ctx)
	if err != nil {
		return nil, err
	}
	src := resolve.NewClosure(ctx, reg, secrets, c.Limits)
	p := diagnose.Predict(src, c.crossplane(ctx), before, after)
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
		d := &resolve.Definitions{Brings: to.NotIn(from)}
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
