package action

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// ActionRename names rename among the verbs of findings.Rules.
const ActionRename = installed.OperationRename

// Rename gives an installed package another name, by default the one
// Crossplane's resolver gives its repository, keeping every object its
// revisions installed (and so every object of their kinds). Crossplane
// hands control of an object only between revisions of one package
// (v2.4's establisher) or not at all while the controller holds it
// (v2.3), and refuses a second package of one source in the Lock, so the
// new package is made paused, the old one's revision deactivated (which
// releases control and leaves the Lock), and only then the new one let
// run; the old package goes once the new one controls everything and is
// healthy. Plan reads and judges; Apply does it in that order, and undoes
// what it did when a step fails.
type Rename struct {
	cfg *Config
	// To is the new name; "" is the resolver's name for the package's
	// repository.
	To string
	// Timeout bounds the whole rename: every wait takes from it.
	Timeout time.Duration
	// DryRun has the API server check the first writes (the new
	// package, the old one's pause) without making them.
	DryRun bool
	// Undo undoes the rename a run cut short recorded, instead of
	// finishing it.
	Undo bool
}

// NewRename is a rename on cfg's cluster.
func NewRename(cfg *Config) *Rename { return &Rename{cfg: cfg} }

// RenamePlan is what a rename would do: the plan's findings, and the
// steps it takes, in order.
type RenamePlan struct {
	*Plan
	Steps []string `json:"steps"`
	// Objects are what the old package's revisions installed, as
	// kind/name; Live counts the objects of the CRDs among them (and of
	// the CRDs their MRDs define).
	Objects    []string `json:"objects"`
	Live       int64    `json:"liveObjects"`
	Dependents []string `json:"dependents,omitempty"`
	// Crossplane is the running release the hand-over was planned for.
	Crossplane string `json:"crossplaneVersion,omitempty"`
	// Resume is the record a rename cut short left on the packages: this
	// plan finishes it, or with Undo undoes it.
	Resume *installed.Operation `json:"resume,omitempty"`
	Undo   bool                 `json:"undo,omitempty"`

	// created is the new package a rename cut short made; leftOver: the
	// old package is gone already, and only the new one is left to check.
	created  *installed.Package
	leftOver bool

	old        *installed.Package
	newName    string
	revs       []*installed.Revision
	objects    []ownedObject
	counted    []*cluster.CRD
	dependents []*installed.Package
	source     string
	ready      installed.Readiness
}

// ownedObject is an object the old package's revisions installed.
type ownedObject struct {
	name string // kind/name, as printed
	gvr  schema.GroupVersionResource
	obj  string // its name
	uid  string
	// controlled: one of the old package's revisions controls it.
	controlled bool
	crd        *cluster.CRD
}

// Plan reads the package arg names (NAME or KIND/NAME) and the package
// manager's state, and plans the rename. It returns nil when the package
// already has the name.
func (r *Rename) Plan(ctx context.Context, arg string) (*RenamePlan, error) {
	c, err := r.cfg.connect()
	if err != nil {
		return nil, err
	}
	if g := c.Dialect().API().Group; g != "pkg.crossplane.io" {
		return nil, &exit.UsageError{Err: fmt.Errorf("rename knows how Crossplane's pkg.crossplane.io package manager hands objects over, and this cluster's packages are %s", g), Hint: "See 'kubectl xpkg rename --help' for usage."}
	}
	old, err := c.Lookup(ctx, arg)
	if apierrors.IsNotFound(err) {
		// A rename cut short after it deleted the old package.
		if rp, ferr := r.planLeftOver(ctx, c, arg); rp != nil || ferr != nil {
			return rp, ferr
		}
	}
	if err != nil {
		return nil, err
	}
	repo := reference.Repository(old.Source)
	op, err := installed.ReadOperation(old)
	if err != nil {
		return nil, err
	}
	newName := cmp.Or(r.To, diagnose.ResolverName(repo))
	if op != nil {
		if err := r.sameRename(old, op); err != nil {
			return nil, err
		}
		newName = op.NewName()
	} else if r.Undo {
		return nil, &exit.UsageError{Err: fmt.Errorf("%s carries no record of a rename cut short (%s): nothing to undo", old.KindName(), installed.OperationAnnotation), Hint: "See 'kubectl xpkg rename --help' for usage."}
	}
	if newName == old.Name {
		r.cfg.Events.say("%s already has the name %s: nothing to do", old.KindName(), newName)
		return nil, nil
	}
	s := diagnose.Read(ctx, c)
	s.ReadObjects(ctx, c, r.cfg.XPNamespace)
	rp := &RenamePlan{Plan: NewPlan(ActionRename, old.KindName(), old.Name, installed.KindName(old.Kind, newName)),
		old: old, newName: newName, source: repo, Steps: []string{}, Objects: []string{}}
	if op != nil {
		if err := r.resumeFrom(s, rp, op); err != nil {
			return nil, err
		}
	}
	rp.ready = c.Dialect().Readiness(old)
	rp.revs = s.RevisionsOf(old)
	if err := r.inventory(ctx, c, s, rp); err != nil {
		return nil, err
	}
	if err := r.countLive(ctx, c, rp); err != nil {
		return nil, err
	}
	rp.Crossplane = s.CrossplaneVersion()
	r.judge(s, rp)
	rp.Steps = rp.steps()
	return rp, nil
}

// countLive counts the objects of the CRDs the package installed and of
// those its MRDs define: what must still be there after the rename.
func (r *Rename) countLive(ctx context.Context, c *cluster.Cluster, rp *RenamePlan) error {
	counts, err := c.CountAll(ctx, rp.counted)
	if err != nil {
		return fmt.Errorf("plan the rename of %s: %w", rp.Package, err)
	}
	for _, n := range counts {
		rp.Live += n.N
	}
	return nil
}

// judge makes the plan's findings. A rename resumed starts from what the
// one cut short left, which is neither healthy nor free: only what would
// undo it as it goes on is judged.
func (r *Rename) judge(s *diagnose.State, rp *RenamePlan) {
	if rp.Resume != nil {
		rp.add(resumeFinding(rp))
		rp.add(gitOpsFindings(rp.old)...)
		return
	}
	rp.add(r.stateFindings(s, rp)...)
	rp.add(r.targetFindings(s, rp)...)
	rp.add(r.lockFindings(s, rp)...)
	rp.add(releaseFinding(rp)...)
	rp.add(gitOpsFindings(rp.old)...)
	rp.add(handOverFindings(rp)...)
}

// dependentNames are the dependents as kind/name.
func dependentNames(ps []*installed.Package) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.KindName())
	}
	slices.Sort(out)
	return out
}
