package diagnose

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// InUseFinalizer is the finalizer crossplane-runtime's ProviderConfig
// reconciler puts on every ProviderConfig and removes, once it is deleted,
// when no ProviderConfigUsage names it.
const InUseFinalizer = "in-use.crossplane.io"

// configReads is how many ProviderConfig kinds are listed at once.
const configReads = 8

// usageLabel names, on a ProviderConfigUsage, the ProviderConfig it
// counts a use of.
const usageLabel = "crossplane.io/provider-config"

// stuckConfig is a ProviderConfig whose deletion InUseFinalizer has held
// past deletionGrace, with the usages that hold it.
type stuckConfig struct {
	crd        *cluster.CRD
	pc         cluster.ObjectMeta
	usageCRD   *cluster.CRD
	usages     []usage
	usagesRead bool
}

// usage is a ProviderConfigUsage: its name (the managed resource's UID)
// and the resource it tells of; gone when that resource is no longer
// there (or its kind no longer served, which keeps the garbage collector
// from deleting the usage).
type usage struct {
	name     string
	resource string
	gone     bool
}

// readProviderConfigs lists each provider's ProviderConfig kinds (their
// metadata, one list each) and, for those whose deletion is held, their
// ProviderConfigUsages (one list per kind) and the kinds those name (one
// metadata list each).
func (s *State) readProviderConfigs(ctx context.Context, c *cluster.Cluster) {
	s.stuckConfigs, s.liveUIDs = nil, map[string]bool{}
	var kinds []*cluster.CRD
	for i := range s.defs {
		if d := s.defs[i].CRD; d != nil && (d.Kind == "ProviderConfig" || d.Kind == "ClusterProviderConfig") && !strings.HasPrefix(d.Group, "pkg.") {
			kinds = append(kinds, d)
		}
	}
	// Every provider serves one or two kinds: read configReads at a time.
	var mu sync.Mutex
	g := errgroup.Group{}
	g.SetLimit(configReads)
	for _, crd := range kinds {
		g.Go(func() error {
			var held []stuckConfig
			err := c.EachObject(ctx, crd, func(o cluster.ObjectMeta) {
				if o.Deleting != nil && time.Since(*o.Deleting) >= deletionGrace && slices.Contains(o.Finalizers, InUseFinalizer) {
					held = append(held, stuckConfig{crd: crd, pc: o, usageCRD: s.usageKind(crd)})
				}
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				s.unread = append(s.unread, exit.Message(err))
			}
			s.stuckConfigs = append(s.stuckConfigs, held...)
			return nil
		})
	}
	_ = g.Wait()
	slices.SortFunc(s.stuckConfigs, func(a, b stuckConfig) int {
		return strings.Compare(a.crd.Name+"/"+a.pc.Namespace+"/"+a.pc.Name, b.crd.Name+"/"+b.pc.Namespace+"/"+b.pc.Name)
	})
	seen := map[string]bool{}
	for i := range s.stuckConfigs {
		sc := &s.stuckConfigs[i]
		if sc.usageCRD == nil {
			continue
		}
		us, err := c.HeldObjects(ctx, sc.usageCRD)
		if err != nil {
			s.unread = append(s.unread, exit.Message(err))
			continue
		}
		sc.usagesRead = true
		for _, u := range us {
			if u.GetLabels()[usageLabel] == sc.pc.Name && u.GetNamespace() == sc.pc.Namespace {
				sc.usages = append(sc.usages, s.usageOf(ctx, c, u, seen))
			}
		}
	}
}

// usageKind is the CRD of the ProviderConfigUsages in pc's group.
func (s *State) usageKind(pc *cluster.CRD) *cluster.CRD {
	want := strings.TrimSuffix(pc.Kind, "ProviderConfig") + "ProviderConfigUsage"
	for i := range s.defs {
		if d := s.defs[i].CRD; d != nil && d.Group == pc.Group && d.Kind == want {
			return d
		}
	}
	return nil
}

// usageOf reads what u tells of and whether that resource is gone: the
// kind's objects are listed once (their metadata), on first need.
func (s *State) usageOf(ctx context.Context, c *cluster.Cluster, u *unstructured.Unstructured, seen map[string]bool) usage {
	av, _, _ := unstructured.NestedString(u.Object, "resourceRef", "apiVersion")
	kind, _, _ := unstructured.NestedString(u.Object, "resourceRef", "kind")
	name, _, _ := unstructured.NestedString(u.Object, "resourceRef", "name")
	us := usage{name: u.GetName(), resource: kind + " " + name}
	gk := schema.FromAPIVersionAndKind(av, kind).GroupKind()
	var crd *cluster.CRD
	for i := range s.defs {
		if d := s.defs[i].CRD; d != nil && d.Group == gk.Group && d.Kind == gk.Kind {
			crd = d
		}
	}
	if crd == nil || len(crd.Served) == 0 {
		us.gone = true
		return us
	}
	if !seen[crd.Name] {
		seen[crd.Name] = true
		if err := c.EachObject(ctx, crd, func(o cluster.ObjectMeta) {
			s.liveUIDs[o.UID] = true
		}); err != nil {
			s.unread = append(s.unread, exit.Message(err))
			return us
		}
	}
	// A usage is named after the UID of the resource it tells of.
	us.gone = !s.liveUIDs[u.GetName()]
	return us
}

// providerConfigsStuck: a ProviderConfig whose deletion waits, past
// deletionGrace, for usages (crossplane#3271): its provider's controller
// removes InUseFinalizer only once no usage names it, and a usage of a
// resource that is gone stays when the garbage collector cannot delete
// it (its owner's kind no longer served).
func (s *State) providerConfigsStuck() []findings.Finding {
	var out []findings.Finding
	for _, sc := range s.stuckConfigs {
		name := sc.pc.Name
		if sc.pc.Namespace != "" {
			name = sc.pc.Namespace + "/" + name
		}
		msg := fmt.Sprintf("%s %s has been deleting for %s, held by %s, which its provider's controller removes once no %s names it",
			sc.crd.Kind, name, since(*sc.pc.Deleting), InUseFinalizer, usageKindName(sc.usageCRD))
		switch {
		case sc.usageCRD == nil:
			msg += ": its group serves no ProviderConfigUsage kind, so nothing can remove it but by hand (kubectl patch " + sc.crd.Name + " " + sc.pc.Name + " --type=merge -p '{\"metadata\":{\"finalizers\":null}}')"
		case !sc.usagesRead:
			msg += " (its usages could not be read)"
		case len(sc.usages) == 0:
			msg += ": none does now, so its provider's controller does not run (check the provider's revision and pods)"
		default:
			msg += ": " + usageList(sc)
		}
		out = append(out, findings.Finding{Rule: findings.RuleProviderConfigStuck, Severity: findings.Blocking, Object: strings.ToLower(sc.crd.Kind) + "/" + name,
			Count: findings.Count(int64(len(sc.usages))), Message: msg})
	}
	return out
}

func usageKindName(crd *cluster.CRD) string {
	if crd == nil {
		return "ProviderConfigUsage"
	}
	return crd.Kind
}

// usageList names the usages, and the way out: the usages of resources
// that are gone deleted by hand, those of live resources moved first.
func usageList(sc stuckConfig) string {
	var names, gone []string
	for _, u := range sc.usages {
		state := "exists"
		if u.gone {
			state = "gone"
			gone = append(gone, u.name)
		}
		names = append(names, fmt.Sprintf("%s (%s, %s)", u.name, u.resource, state))
	}
	msg := fmt.Sprintf("%d usage(s) remain: %s. ", len(sc.usages), ShortList(names))
	ns := namespaceFlag(sc.pc.Namespace)
	switch {
	case len(gone) == len(sc.usages):
		msg += fmt.Sprintf("Every one tells of a resource that is gone, whose usage the garbage collector did not delete (its kind is no longer served, or it never ran): kubectl delete %s%s %s removes them, and the deletion finishes", sc.usageCRD.Name, ns, strings.Join(gone, " "))
	case len(gone) > 0:
		msg += fmt.Sprintf("%d tell of resources that are gone: kubectl delete %s%s %s removes them; the others tell of managed resources that use it still: delete those, or point them at another ProviderConfig, first", len(gone), sc.usageCRD.Name, ns, strings.Join(gone, " "))
	default:
		msg += "Each tells of a managed resource that uses it still: delete those, or point them at another ProviderConfig, first"
	}
	return msg
}
