package diagnose

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// objectState is what doctor reads besides the package manager's own
// records: the cluster's CRDs and MRDs (who owns and who controls each),
// the DeploymentRuntimeConfigs and, once a rule needs it, the running
// Crossplane's version.
type objectState struct {
	// defs and configs are what could be read: the rules judge what they
	// hold and never what they lack, so a list that could not be read (an
	// Unread line) makes no finding.
	defs    []cluster.DefinitionMeta
	configs []cluster.RuntimeConfig
	// configsRead: the DeploymentRuntimeConfigs were read (none or some).
	configsRead bool
	// revisionKinds maps each revision kind (group and kind, as owner
	// references name it) to its package kind; packageKinds are the
	// package kinds.
	revisionKinds map[schema.GroupKind]string
	packageKinds  map[schema.GroupKind]bool
	revByUID      map[types.UID]*installed.Revision
	// recorders are the active revisions that record each definition in
	// status.objectRefs, by the definition's name.
	recorders map[string][]*installed.Revision
	namespace string
	version   func() string
}

// ReadObjects reads the CRDs and the MRDs with one paged list each (names,
// owners and versions, never the schemas) and the DeploymentRuntimeConfigs
// with one, however many there are; then the objects of the kinds whose
// deletion is under way (readDeletions), and what activation needs
// (readActivation). A kind the cluster does not serve
// has nothing to read; one that cannot be read is noted, and the rules
// that need it find nothing in it.
func (s *State) ReadObjects(ctx context.Context, c *cluster.Cluster, namespace string) {
	crds, crdsErr := c.AllCRDs(ctx)
	if crdsErr != nil {
		s.unread = append(s.unread, exit.Message(crdsErr))
	}
	mrds, err := c.AllMRDs(ctx)
	if err != nil {
		s.unread = append(s.unread, exit.Message(err))
	}
	s.defs = append(crds, mrds...)
	if s.configs, err = c.RuntimeConfigs(ctx); err != nil {
		s.unread = append(s.unread, exit.Message(err))
	}
	s.configsRead = err == nil
	s.index(c.Dialect())
	s.namespace = cmp.Or(namespace, "crossplane-system")
	s.version = lazyVersion(ctx, c, namespace)
	s.readDeletions(ctx, c)
	s.readActivation(ctx, c, mrds, crds, crdsErr == nil)
}

// index finds revisions by UID and definitions' recorders, and the kinds
// owner references name packages and revisions by.
func (s *State) index(d cluster.Dialect) {
	s.revisionKinds, s.packageKinds = map[schema.GroupKind]string{}, map[schema.GroupKind]bool{}
	for _, k := range d.Kinds() {
		if gvr, err := d.Resource(k); err == nil {
			s.packageKinds[schema.GroupKind{Group: gvr.Group, Kind: k}] = true
		}
		if rk := d.RevisionKind(k); rk != "" {
			if gvr, err := d.Resource(rk); err == nil {
				s.revisionKinds[schema.GroupKind{Group: gvr.Group, Kind: rk}] = k
			}
		}
	}
	s.revByUID, s.recorders = map[types.UID]*installed.Revision{}, map[string][]*installed.Revision{}
	for _, r := range s.revs {
		if uid := r.UID(); uid != "" {
			s.revByUID[types.UID(uid)] = r
		}
		if !r.IsActive() {
			continue
		}
		for name := range definitionRefs(r) {
			s.recorders[name] = append(s.recorders[name], r)
		}
	}
}

// lazyVersion reads the running Crossplane's version the first time a rule
// asks, and only then: most clusters need no request for it. "" when it
// cannot be read.
func lazyVersion(ctx context.Context, c *cluster.Cluster, namespace string) func() string {
	var v string
	read := namespace == ""
	return func() string {
		if !read {
			read = true
			v, _ = c.CrossplaneVersion(ctx, namespace)
		}
		return v
	}
}

// versionIn reports whether version is known and at least from and below
// before ("" for no bound), pre-releases of a bound counted with it.
func versionIn(version, from, before string) bool {
	v, err := releases.Parse(version)
	if err != nil {
		return false
	}
	return (from == "" || !v.LessThan(semver.MustParse(from+"-0"))) && (before == "" || v.LessThan(semver.MustParse(before+"-0")))
}

// revisionHealth is a revision's RevisionHealthy condition (Healthy
// before Crossplane v1.14 split it from RuntimeHealthy).
func revisionHealth(r *installed.Revision) *installed.Condition {
	return cmp.Or(r.Condition("RevisionHealthy"), r.Condition(installed.TypeHealthy))
}

// revPackage names a revision's package as KIND/NAME.
func revPackage(r *installed.Revision) string {
	return installed.KindName(packageKind(r.Kind), r.Package)
}

// definitionRefs are the names of the CRDs and MRDs a revision records:
// by name alone, since a provider's CRD becomes an MRD of the same name
// when Crossplane v2 converts it.
func definitionRefs(r *installed.Revision) map[string]bool {
	out := map[string]bool{}
	for _, o := range r.Objects {
		// The package manager writes a new revision's references before
		// their kinds (seen on v2.4.2 for a second): a name without a kind
		// counts as recorded.
		if o.Kind == "" || o.Kind == "CustomResourceDefinition" || o.Kind == "ManagedResourceDefinition" {
			out[o.Name] = true
		}
	}
	return out
}

func groupKind(o metav1.OwnerReference) schema.GroupKind {
	return schema.FromAPIVersionAndKind(o.APIVersion, o.Kind).GroupKind()
}

// Definitions are the CRDs and MRDs ReadObjects read.
func (s *State) Definitions() []cluster.DefinitionMeta { return s.defs }

// CrossplaneVersion is the running Crossplane's version, read the first
// time it is asked for; "" when it cannot be read.
func (s *State) CrossplaneVersion() string { return s.version() }

func (s *State) definition(resource, name string) *cluster.DefinitionMeta {
	for i := range s.defs {
		if s.defs[i].Resource == resource && s.defs[i].Name == name {
			return &s.defs[i]
		}
	}
	return nil
}

// defKind names a definition's kind in a message, DefinitionObject as a
// finding's object (KIND/NAME) and patchResource for kubectl.
func defKind(resource string) string {
	if resource == cluster.ResourceMRDs {
		return "MRD"
	}
	return "CRD"
}

func DefinitionObject(resource, name string) string {
	if resource == cluster.ResourceMRDs {
		return installed.KindName("ManagedResourceDefinition", name)
	}
	return installed.KindName("CustomResourceDefinition", name)
}

func patchResource(resource string) string {
	if resource == cluster.ResourceMRDs {
		return "managedresourcedefinition"
	}
	return "crd"
}

// storedUndefined: the API server validates every update of a CRD against
// its status.storedVersions, each of which must stay in spec.versions; a
// CRD that lists one its spec no longer defines can be updated by no one,
// the package manager included. A package that drops a stored version is
// refused the same way: its revision says so.
func (s *State) storedUndefined() []findings.Finding {
	var out []findings.Finding
	said := map[string]bool{}
	for i := range s.defs {
		d := &s.defs[i]
		var gone []string
		for _, v := range d.Stored {
			if !slices.Contains(d.Versions, v) {
				gone = append(gone, v)
			}
		}
		if d.Resource != cluster.ResourceCRDs || len(gone) == 0 {
			continue
		}
		said[d.Name] = true
		out = append(out, findings.Finding{Rule: findings.RuleStoredUndefined, Severity: findings.Blocking, Object: DefinitionObject(d.Resource, d.Name),
			Message: fmt.Sprintf("CRD %s stores objects at %s (status.storedVersions), which its spec.versions no longer defines: the API server refuses every update of the CRD while it does, so the package manager cannot update it. %s",
				d.Name, strings.Join(gone, ", "), dropStoredWayOut(d.Name, gone, keptStored(d)))})
	}
	return append(out, s.storedConditions(said)...)
}

// keptStored are the stored versions a CRD still defines, and its storage
// version, which status.storedVersions must keep.
func keptStored(d *cluster.DefinitionMeta) []string {
	var keep []string
	for _, v := range d.Stored {
		if slices.Contains(d.Versions, v) {
			keep = append(keep, v)
		}
	}
	if d.Storage != "" && !slices.Contains(keep, d.Storage) {
		keep = append(keep, d.Storage)
	}
	return keep
}

// dropStoredWayOut: the status subresource is not held to spec.versions,
// so a status patch drops a version; objects still stored at it need it
// defined again (an update that adds it back is accepted) and each object
// read and written back first.
func dropStoredWayOut(crd string, gone, keep []string) string {
	value := `["` + strings.Join(keep, `","`) + `"]`
	return fmt.Sprintf("When no object is stored at %s any more, drop it from status.storedVersions: kubectl patch crd %s --subresource=status --type=json -p '[{\"op\":\"replace\",\"path\":\"/status/storedVersions\",\"value\":%s}]'; when some may be, define %s in the CRD again first, read and write back every object so that it is stored at the storage version, then drop it",
		strings.Join(gone, ", "), crd, value, strings.Join(gone, ", "))
}

// storedVersionRefusal is the API server's refusal of a CRD whose spec
// would drop a stored version, in the words of Kubernetes before and
// after v1.30.
var storedVersionRefusal = regexp.MustCompile(`CustomResourceDefinition[.a-z0-9]* "([^"]+)" is invalid: .*status\.storedVersions.*(must appear in spec\.versions|missing from spec\.versions)`)

func (s *State) storedConditions(said map[string]bool) []findings.Finding {
	var out []findings.Finding
	for _, r := range s.revs {
		c := revisionHealth(r)
		if !r.IsActive() || c == nil || c.Status != "False" {
			continue
		}
		m := storedVersionRefusal.FindStringSubmatch(c.Message)
		if m == nil || said[m[1]] {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleStoredUndefined, Severity: findings.Blocking, Object: revPackage(r),
			Message: fmt.Sprintf("%s's revision %s cannot update CRD %s: its package no longer defines a version the CRD stores objects at (%s). Migrate those objects to a version the package defines and drop the old one from the CRD's status.storedVersions (kubectl patch crd %s --subresource=status), or roll the package back (kubectl xpkg rollback %s)",
				revPackage(r), r.Name, m[1], c.Message, m[1], revPackage(r))})
	}
	return out
}

// objectsMissing: the package manager writes a revision's status.objectRefs
// from the objects it established, and acts on that record (the RBAC
// manager grants a provider's runtime access to the kinds it names, and no
// others): in crossplane#7712 an active revision recorded 13 of 48 MRDs,
// reported itself healthy, and the provider was refused its own managed
// resources for hours. Without reading the package, two things prove a
// record short. A definition that names the revision among its owners was
// established by it (only the establisher writes a revision's UID there),
// and a revision's package never changes; and an inactive revision made
// from the same digest recorded definitions it lacks. Revisions of another
// image are never compared: a new version may drop definitions. An
// unhealthy revision's record is not judged: its condition says why.
func (s *State) objectsMissing() []findings.Finding {
	var out []findings.Finding
	for _, r := range s.revs {
		if c := revisionHealth(r); !r.IsActive() || c == nil || c.Status != "True" {
			continue
		}
		recorded := definitionRefs(r)
		owned := s.ownedUnrecorded(r, recorded)
		sib, more := s.sameDigestMore(r, recorded, owned)
		if len(owned)+len(more) == 0 {
			continue
		}
		var why []string
		if len(owned) > 0 {
			why = append(why, fmt.Sprintf("%d that name it among their owners: %s", len(owned), ShortList(owned)))
		}
		if len(more) > 0 {
			why = append(why, fmt.Sprintf("%d that its inactive revision %s, made from the same image %s, recorded: %s", len(more), sib.Name, r.Image, ShortList(more)))
		}
		out = append(out, findings.Finding{Rule: findings.RuleObjectsMissing, Severity: findings.Blocking, Object: revPackage(r), Count: findings.Count(int64(len(owned) + len(more))),
			Message: fmt.Sprintf("%s's active revision %s reports itself healthy and records %d CRDs and MRDs in status.objectRefs, but lacks %s. Crossplane acts on that record: the RBAC manager grants a provider's runtime access only to the kinds it names, so objects of the kinds it lacks are not reconciled (crossplane#7712). Restart Crossplane so that it reads the package again (kubectl -n %s rollout restart deployment crossplane), then check that the revision records them (kubectl get %s %s -o jsonpath='{.status.objectRefs[*].name}')",
				revPackage(r), r.Name, len(recorded), strings.Join(why, "; and "), s.namespace, strings.ToLower(r.Kind), r.Name)})
	}
	return out
}

// ownedUnrecorded names the definitions that name r among their owners and
// that r does not record.
func (s *State) ownedUnrecorded(r *installed.Revision, recorded map[string]bool) []string {
	uid := types.UID(r.UID())
	if uid == "" {
		return nil
	}
	var out []string
	for i := range s.defs {
		d := &s.defs[i]
		if !recorded[d.Name] && slices.ContainsFunc(d.Owners, func(o metav1.OwnerReference) bool { return o.UID == uid }) {
			out = append(out, defKind(d.Resource)+" "+d.Name)
		}
	}
	return out
}

// sameDigestMore is the inactive revision of r's package, made from the
// same image pinned by digest, that recorded the most definitions r lacks
// (other than those already named), and those.
func (s *State) sameDigestMore(r *installed.Revision, recorded map[string]bool, named []string) (*installed.Revision, []string) {
	if !strings.Contains(r.Image, "@sha256:") {
		return nil, nil
	}
	var best *installed.Revision
	var most []string
	for _, o := range s.revs {
		if o == r || o.Kind != r.Kind || o.Package != r.Package || o.Image != r.Image || o.IsActive() {
			continue
		}
		var more []string
		for name := range definitionRefs(o) {
			if !recorded[name] && !slices.ContainsFunc(named, func(n string) bool { return strings.HasSuffix(n, " "+name) }) {
				more = append(more, name)
			}
		}
		if len(more) > len(most) {
			best, most = o, more
		}
	}
	slices.Sort(most)
	return best, most
}

// ShortList names up to five of names, and how many more.
func ShortList(names []string) string {
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}
