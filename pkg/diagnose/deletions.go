package diagnose

import (
	"context"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// ManagedFinalizer is the finalizer crossplane-runtime's managed resource
// reconciler puts on every managed resource and removes, once what the
// resource manages is deleted, from the provider's controller alone.
const ManagedFinalizer = "finalizer.managedresource.crossplane.io"

// heldShown is how many of a kind's objects a finding names.
const heldShown = 3

// deletionState is what doctor reads of the deletions under way: the
// objects of each kind whose definition is being deleted or whose
// provider runs no active revision, and, when a definition's deletion is
// held, the Compositions (what else it breaks).
type deletionState struct {
	// held are the objects read of each kind, by its CRD's name: a kind
	// that could not be read has no entry (an Unread line).
	held map[string]*heldObjects
	// compositions were read (compositionsRead) once a deletion is held
	// or the cluster has MRDs (readCompositions: one list, tried once).
	compositions      []composition.Composition
	compositionsRead  bool
	compositionsTried bool
	// heldRepairs is the repair ReadHeldRepairs planned.
	heldRepairs heldRepairs
	// stuckConfigs are the ProviderConfigs whose deletion usages hold;
	// liveUIDs the UIDs of the managed resources their usages tell of.
	stuckConfigs []stuckConfig
	liveUIDs     map[string]bool
}

// heldObjects sums up the objects of one kind.
type heldObjects struct {
	kind string
	// n objects exist; first are the first heldShown of them.
	n     int
	first []cluster.ObjectMeta
	// deleting are those being deleted that carry ManagedFinalizer: n of
	// them, the first heldShown named.
	deletingN     int
	deletingFirst []cluster.ObjectMeta
}

func (h *heldObjects) add(o cluster.ObjectMeta) {
	h.n++
	if len(h.first) < heldShown {
		h.first = append(h.first, o)
	}
	if o.Deleting != nil && slices.Contains(o.Finalizers, ManagedFinalizer) {
		h.deletingN++
		if len(h.deletingFirst) < heldShown {
			h.deletingFirst = append(h.deletingFirst, o)
		}
	}
}

// readDeletions lists the objects of each kind involved, one paged list
// of their metadata each: the kinds whose CRD or MRD is being deleted,
// and those a provider serves that has no active revision (whose
// controller nothing runs). A healthy cluster has none, and costs no
// request. The Compositions are read, one list, only when a deletion is
// held by objects.
func (s *State) readDeletions(ctx context.Context, c *cluster.Cluster) {
	s.readProviderConfigs(ctx, c)
	s.held = map[string]*heldObjects{}
	for i := range s.defs {
		d := &s.defs[i]
		crd := s.crdOf(d)
		if crd == nil || s.held[crd.Name] != nil || !s.deletingOrUnserved(d) {
			continue
		}
		h := &heldObjects{kind: crd.Kind}
		if err := c.EachObject(ctx, crd, h.add); err != nil {
			s.unread = append(s.unread, exit.Message(err))
			continue
		}
		s.held[crd.Name] = h
	}
	for i := range s.defs {
		if d := &s.defs[i]; d.Deleting == nil || s.heldBy(d) == nil {
			continue
		}
		s.readCompositions(ctx, c)
		return
	}
}

// readCompositions lists the Compositions, once whoever asks first.
func (s *State) readCompositions(ctx context.Context, c *cluster.Cluster) {
	if s.compositionsTried {
		return
	}
	s.compositionsTried = true
	var err error
	if s.compositions, err = c.Compositions(ctx); err != nil {
		s.unread = append(s.unread, exit.Message(err))
	}
	s.compositionsRead = err == nil
}

// deletingOrUnserved: d is being deleted, or a package's revision made it
// and its package has no active revision.
func (s *State) deletingOrUnserved(d *cluster.DefinitionMeta) bool {
	if d.Deleting != nil {
		return true
	}
	sv := s.servedBy(d)
	return sv.pkg != "" && sv.judged && sv.active == nil
}

// crdOf is what was read of the CRD of d's kind: d's own, or for an MRD
// the CRD of its name (Crossplane makes one from the other); nil when
// there is none.
func (s *State) crdOf(d *cluster.DefinitionMeta) *cluster.CRD {
	if d.CRD != nil {
		return d.CRD
	}
	if crd := s.definition(cluster.ResourceCRDs, d.Name); crd != nil {
		return crd.CRD
	}
	return nil
}

// heldBy are the objects of d's kind, when read and some exist.
func (s *State) heldBy(d *cluster.DefinitionMeta) *heldObjects {
	crd := s.crdOf(d)
	if crd == nil {
		return nil
	}
	if h := s.held[crd.Name]; h != nil && h.n > 0 {
		return h
	}
	return nil
}

// server is the package that serves a definition's kind, as its owner
// references (and, for a CRD, those of the MRD of its name) tell: the
// package whose controller reconciles the kind's objects.
type server struct {
	// pkg is the package as KIND/NAME ("": no owner names one); p the
	// package when installed.
	pkg string
	p   *installed.Package
	// revision is the revision named among the owners (the controller
	// first), rev that revision when it exists.
	revision string
	rev      *installed.Revision
	// active is p's active revision, if any; judged says whether the
	// revisions of p's kind were read, without which none is judged gone.
	active *installed.Revision
	judged bool
	// mrdGone: with no package named, an owner is the MRD the CRD was
	// made from, and it is gone (the garbage collector may have dropped
	// the revision's reference first: then the MRD's name is all that is
	// left, and the provider can only be described by the kind).
	mrdGone bool
}

func (s *State) servedBy(d *cluster.DefinitionMeta) server {
	owners := slices.Clone(d.Owners)
	if d.Resource == cluster.ResourceCRDs {
		if mrd := s.definition(cluster.ResourceMRDs, d.Name); mrd != nil {
			owners = append(owners, mrd.Owners...)
		}
	}
	// The controller first: it names the revision that established it.
	slices.SortStableFunc(owners, func(a, b metav1.OwnerReference) int { return controls(b) - controls(a) })
	var sv server
	for _, o := range owners {
		gk := groupKind(o)
		if pk, ok := s.revisionKinds[gk]; ok && sv.revision == "" {
			sv.revision = o.Name
			if sv.rev = s.revByUID[o.UID]; sv.rev != nil {
				sv.pkg = revPackage(sv.rev)
			} else if id := reference.RevisionID(o.Name); id != "" && sv.pkg == "" {
				// A gone revision is named <package>-<id>.
				sv.pkg = installed.KindName(pk, strings.TrimSuffix(o.Name, "-"+id))
			}
		}
		if s.packageKinds[gk] {
			sv.pkg = installed.KindName(o.Kind, o.Name)
		}
		if o.Kind == "ManagedResourceDefinition" && s.definition(cluster.ResourceMRDs, o.Name) == nil {
			sv.mrdGone = true
		}
	}
	if rs := s.recorders[d.Name]; sv.pkg == "" && len(rs) > 0 {
		sv.rev, sv.revision, sv.pkg = rs[0], rs[0].Name, revPackage(rs[0])
	}
	if sv.pkg == "" {
		return sv
	}
	kind, _, _ := strings.Cut(sv.pkg, "/")
	sv.judged = s.kindRead(kind)
	if sv.p = s.pkgByKey[sv.pkg]; sv.p != nil {
		for _, r := range s.RevisionsOf(sv.p) {
			if r.IsActive() {
				sv.active = r
				break
			}
		}
	}
	return sv
}

func controls(o metav1.OwnerReference) int {
	if o.Controller != nil && *o.Controller {
		return 1
	}
	return 0
}

// kindRead reports whether the packages and the revisions of the package
// kind named in lower case (as KindName writes it) were read: only then
// is a package judged not installed, or without an active revision.
func (s *State) kindRead(lowerKind string) bool {
	for k := range s.revsRead {
		if strings.EqualFold(k, lowerKind) {
			return s.pkgsRead[k]
		}
	}
	return false
}

// runs says whether the package's controller runs: an active revision
// whose runtime is not reported unhealthy.
func (sv server) runs() bool {
	if sv.active == nil {
		return false
	}
	c := sv.active.Condition("RuntimeHealthy")
	return c == nil || c.Status != "False"
}

// composing names the Compositions that compose gk.
func (s *State) composing(gk schema.GroupKind) []string {
	var out []string
	for _, c := range s.compositions {
		if slices.Contains(c.Composes, gk) {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}
