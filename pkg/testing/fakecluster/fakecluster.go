// Package fakecluster is a cluster for tests that need no API server, as
// Helm's actionConfigFixture and kubectl's TestFactory are theirs:
// client-go's dynamic fake serving Crossplane's package kinds (and the
// others the plugin reads), and discovery over the same kinds, handed to
// the plugin as a RESTClientGetter whose dynamic client is the fake
// (cluster.DynamicGetter).
//
//	f := fakecluster.New(provider, lock)
//	c := f.Cluster()                   // pkg/action's tests
//	cfg := &action.Config{Getter: f}   // or the plugin's root, in-process
//
// Nothing reconciles: a test writes the status Crossplane's package
// manager would have written. What only a server shows (preconditions,
// RBAC, server-side dry run, admission, watches in real time) needs
// pkg/testing/testenv.
package fakecluster

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	discoveryfake "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
)

// ListKinds are the resources the fake serves, with their list kinds.
var ListKinds = map[schema.GroupVersionResource]string{
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}:                                         "ProviderList",
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "configurations"}:                                    "ConfigurationList",
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "functions"}:                                         "FunctionList",
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"}:                                 "ProviderRevisionList",
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "configurationrevisions"}:                            "ConfigurationRevisionList",
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "functionrevisions"}:                                 "FunctionRevisionList",
	{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}:                                        "LockList",
	{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}:                      "CustomResourceDefinitionList",
	{Group: "stored.example.org", Version: "v1beta1", Resource: "widgets"}:                                     "WidgetList",
	{Group: "protection.crossplane.io", Version: "v1beta1", Resource: "usages"}:                                "UsageList",
	{Group: "protection.crossplane.io", Version: "v1beta1", Resource: "clusterusages"}:                         "ClusterUsageList",
	{Group: "apiextensions.crossplane.io", Version: "v1beta1", Resource: "usages"}:                             "UsageList",
	{Group: "stored.example.org", Version: "v1beta1", Resource: "providerconfigs"}:                             "ProviderConfigList",
	{Group: "stored.example.org", Version: "v1beta1", Resource: "providerconfigusages"}:                        "ProviderConfigUsageList",
	{Group: "apps", Version: "v1", Resource: "deployments"}:                                                    "DeploymentList",
	{Group: "", Version: "v1", Resource: "events"}:                                                             "EventList",
	{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourcedefinitions"}:        "ManagedResourceDefinitionList",
	{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourceactivationpolicies"}: "ManagedResourceActivationPolicyList",
	{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "imageconfigs"}:                                 "ImageConfigList",
	{Group: "", Version: "v1", Resource: "secrets"}:                                                            "SecretList",
	{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "deploymentruntimeconfigs"}:                     "DeploymentRuntimeConfigList",
	{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositions"}:                            "CompositionList",
}

// namespaced are the resources of ListKinds that live in namespaces.
var namespaced = map[string]bool{"events": true, "secrets": true, "deployments": true}

// ServerVersion is the version the fake's discovery reports.
const ServerVersion = "v1.36.3"

// Fake is one test's cluster.
type Fake struct {
	// Dynamic holds the objects; its Actions are the requests made.
	Dynamic *dynamicfake.FakeDynamicClient
	// Discovery serves the kinds of ListKinds and ServerVersion.
	Discovery *discoveryfake.FakeDiscovery
	// Namespace is the kubeconfig context's namespace.
	Namespace string
	// NamespaceFlag, when it points at a value, is -n: it overrides
	// Namespace, as kubectl's flag does.
	NamespaceFlag *string
}

// New is a cluster holding objs.
func New(objs ...*unstructured.Unstructured) *Fake {
	return NewWithLists(nil, objs...)
}

// NewWithLists is New serving, beside ListKinds, the resources of more.
func NewWithLists(more map[schema.GroupVersionResource]string, objs ...*unstructured.Unstructured) *Fake {
	lists := maps.Clone(ListKinds)
	maps.Copy(lists, more)
	ros := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		ros = append(ros, o)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, ros...)
	disc := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{},
		FakedServerVersion: &version.Info{GitVersion: ServerVersion, Major: "1", Minor: "36"}}
	disc.Resources = resourceLists(lists)
	return &Fake{Dynamic: dyn, Discovery: disc, Namespace: "default"}
}

// resourceLists is discovery's view of lists: a group's versions in
// Kubernetes' order of priority (the first is the one the fake discovery
// prefers, as a server prefers it).
func resourceLists(lists map[schema.GroupVersionResource]string) []*metav1.APIResourceList {
	byGV := map[schema.GroupVersion][]metav1.APIResource{}
	for gvr, list := range lists {
		gv := gvr.GroupVersion()
		byGV[gv] = append(byGV[gv], metav1.APIResource{Name: gvr.Resource, Kind: strings.TrimSuffix(list, "List"),
			Namespaced: namespaced[gvr.Resource], Verbs: metav1.Verbs{"get", "list", "watch", "create", "update", "patch", "delete"}})
	}
	gvs := slices.SortedFunc(maps.Keys(byGV), func(a, b schema.GroupVersion) int {
		if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		return version.CompareKubeAwareVersionStrings(b.Version, a.Version) // v1 before v1beta1 before v1alpha1
	})
	out := make([]*metav1.APIResourceList, 0, len(gvs))
	for _, gv := range gvs {
		rs := byGV[gv]
		slices.SortFunc(rs, func(a, b metav1.APIResource) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, &metav1.APIResourceList{GroupVersion: gv.String(), APIResources: rs})
	}
	return out
}

// Cluster is the plugin's cluster client over the fake, speaking the
// newest package API, in Namespace.
func (f *Fake) Cluster() *cluster.Cluster {
	return cluster.NewCluster(f.Dynamic, cluster.StaticDialect(), f.Namespace)
}

// ToDynamicClient is the fake (cluster.DynamicGetter).
func (f *Fake) ToDynamicClient() (dynamic.Interface, error) { return f.Dynamic, nil }

var _ cluster.DynamicGetter = (*Fake)(nil)

// errNoREST: the plugin reads through ToDynamicClient.
var errNoREST = errors.New("a fake cluster has no REST configuration")

// ToRESTConfig fails: there is no server to configure a client for.
func (f *Fake) ToRESTConfig() (*rest.Config, error) { return nil, errNoREST }

// ToDiscoveryClient is the fake discovery, cached in memory as
// cli-runtime caches a real one.
func (f *Fake) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return memory.NewMemCacheClient(f.Discovery), nil
}

// ToRESTMapper maps kinds through the fake discovery.
func (f *Fake) ToRESTMapper() (meta.RESTMapper, error) {
	dc, _ := f.ToDiscoveryClient()
	return restmapper.NewDeferredDiscoveryRESTMapper(dc), nil
}

// ToRawKubeConfigLoader is a kubeconfig of one context, "fake", in
// Namespace (or -n's).
func (f *Fake) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["fake"] = &clientcmdapi.Cluster{Server: "https://fake.invalid"}
	cfg.AuthInfos["fake"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["fake"] = &clientcmdapi.Context{Cluster: "fake", AuthInfo: "fake", Namespace: f.Namespace}
	cfg.CurrentContext = "fake"
	over := &clientcmd.ConfigOverrides{}
	if f.NamespaceFlag != nil {
		over.Context.Namespace = *f.NamespaceFlag
	}
	return clientcmd.NewDefaultClientConfig(*cfg, over)
}

// Requests are the requests made of the dynamic fake so far, as the
// API server's request log would show them: "GET /apis/pkg.crossplane.io/
// v1/providers/name", "POST /api/v1/namespaces/ns/secrets".
func (f *Fake) Requests() []string {
	var out []string
	for _, a := range f.Dynamic.Actions() {
		out = append(out, Request(a))
	}
	return out
}

// ClearRequests forgets the requests made so far.
func (f *Fake) ClearRequests() { f.Dynamic.ClearActions() }

// Request renders an action of the fake as the request it stands for.
func Request(a clienttesting.Action) string {
	gvr := a.GetResource()
	path := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		path = "/api/" + gvr.Version
	}
	if ns := a.GetNamespace(); ns != "" {
		path += "/namespaces/" + ns
	}
	path += "/" + gvr.Resource
	if name := objectName(a); name != "" {
		path += "/" + name
	}
	if sub := a.GetSubresource(); sub != "" {
		path += "/" + sub
	}
	if a.GetVerb() == "watch" {
		path += "?watch=true"
	}
	return method(a.GetVerb()) + " " + path
}

// objectName is the name of the object an action is about ("": a
// collection, which a create is sent to).
func objectName(a clienttesting.Action) string {
	switch a.GetVerb() {
	case "get", "delete", "patch":
		if n, ok := a.(interface{ GetName() string }); ok {
			return n.GetName()
		}
	case "update":
		if u, ok := a.(clienttesting.UpdateAction); ok {
			if m, err := meta.Accessor(u.GetObject()); err == nil {
				return m.GetName()
			}
		}
	}
	return ""
}

func method(verb string) string {
	switch verb {
	case "create":
		return "POST"
	case "update":
		return "PUT"
	case "patch":
		return "PATCH"
	case "delete", "delete-collection":
		return "DELETE"
	}
	return "GET" // get, list, watch
}

// Object is an object of apiVersion and kind named name, with fields
// (spec, status...) beside its metadata.
func Object(apiVersion, kind, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}}
	maps.Copy(u.Object, fields)
	return u
}

// ImageConfig is an ImageConfig matching images under prefix, rewriting
// them to rewrite and pulling with the pull secret secret (each optional).
func ImageConfig(name, prefix, rewrite, secret string) *unstructured.Unstructured {
	spec := map[string]any{"matchImages": []any{map[string]any{"type": "Prefix", "prefix": prefix}}}
	if rewrite != "" {
		spec["rewriteImage"] = map[string]any{"prefix": rewrite}
	}
	if secret != "" {
		spec["registry"] = map[string]any{"authentication": map[string]any{"pullSecretRef": map[string]any{"name": secret}}}
	}
	return Object("pkg.crossplane.io/v1beta1", "ImageConfig", name, map[string]any{"spec": spec})
}

// PullSecret is a dockerconfigjson Secret in crossplane-system holding
// user and password for host.
func PullSecret(name, host, user, password string) *unstructured.Unstructured {
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}}})
	u := Object("v1", "Secret", name, map[string]any{"type": "kubernetes.io/dockerconfigjson",
		"data": map[string]any{".dockerconfigjson": base64.StdEncoding.EncodeToString(cfg)}})
	u.SetNamespace("crossplane-system")
	return u
}

// CRD is an Established cluster-scoped CustomResourceDefinition of kind
// in group, served and stored at version.
func CRD(group, kind, plural, version string) *unstructured.Unstructured {
	return Object("apiextensions.k8s.io/v1", "CustomResourceDefinition", plural+"."+group, map[string]any{
		"spec": map[string]any{"group": group, "scope": "Cluster",
			"names":    map[string]any{"kind": kind, "plural": plural},
			"versions": []any{map[string]any{"name": version, "served": true, "storage": true}}},
		"status": map[string]any{"storedVersions": []any{version},
			"conditions": []any{map[string]any{"type": "Established", "status": "True", "reason": "InitialNamesAccepted"}}},
	})
}

// Deleting is u being deleted since t, as the API server leaves an
// object whose finalizers have not all been removed: deletionTimestamp
// set, and for a CRD (which the API server's own finalizer holds until
// every object of its kind is gone) the condition Terminating=True beside
// an Established that stays True.
func Deleting(u *unstructured.Unstructured, since time.Time) *unstructured.Unstructured {
	u = u.DeepCopy()
	ts := metav1.NewTime(since)
	u.SetDeletionTimestamp(&ts)
	if u.GetKind() != "CustomResourceDefinition" {
		return u
	}
	u.SetFinalizers([]string{"customresourcecleanup.apiextensions.k8s.io"})
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	conds = append(conds, map[string]any{"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress",
		"message": "CustomResource deletion is in progress"})
	_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	return u
}
