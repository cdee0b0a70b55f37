package cluster

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubetesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func resources(gv string, kinds ...string) *metav1.APIResourceList {
	l := &metav1.APIResourceList{GroupVersion: gv}
	for _, k := range kinds {
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: k + "s", Kind: k})
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: k + "s/status", Kind: k})
	}
	return l
}

func TestDiscoverPackageAPIsOrdersGenerationsAndSkipsOthers(t *testing.T) {
	dc := &fakediscovery.FakeDiscovery{Fake: &kubetesting.Fake{Resources: []*metav1.APIResourceList{
		resources("apps/v1", "Deployment"),
		resources("packages.crossplane.io/v1alpha1", "ClusterPackageInstall", "PackageInstall", "Package"),
		resources("pkg.crossplane.io/v1", "Provider", "Configuration"),
		resources("pkg.crossplane.io/v1beta1", "Lock", "Function"),
	}}}
	apis, err := DiscoverPackageAPIs(dc)
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, a := range apis {
		groups = append(groups, a.Group)
	}
	if !slices.Equal(groups, []string{"pkg.crossplane.io", "packages.crossplane.io"}) {
		t.Fatalf("groups = %v", groups)
	}
	v1 := apis[0].Versions[0]
	if v1.Version != "v1" || !slices.Equal(v1.Kinds, []string{"Configuration", "Provider"}) {
		t.Errorf("pkg.crossplane.io/v1 = %+v", v1)
	}
	if apis[1].Name != "package installs (Crossplane v0.11-v0.13)" {
		t.Errorf("generation name = %q", apis[1].Name)
	}
}

// TestDiscoverAgainstRealAPIServer reads the kinds the real API server serves
// from the Crossplane CRDs the environment loaded.
func TestDiscoverAgainstRealAPIServer(t *testing.T) {
	env := testenv.Get(t)
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &env.Kubeconfig
	cache := t.TempDir()
	flags.CacheDir = &cache
	dc, err := NewClients(flags).Discovery()
	if err != nil {
		t.Fatal(err)
	}
	apis, err := DiscoverPackageAPIs(dc)
	if err != nil {
		t.Fatal(err)
	}
	if len(apis) != 1 || apis[0].Group != "pkg.crossplane.io" || apis[0].PreferredVersion != "v1" {
		t.Fatalf("apis = %+v", apis)
	}
	served := map[string][]string{}
	for _, v := range apis[0].Versions {
		served[v.Version] = v.Kinds
	}
	for _, k := range []string{"Provider", "ProviderRevision", "Configuration", "ConfigurationRevision", "Function", "FunctionRevision"} {
		if !slices.Contains(served["v1"], k) {
			t.Errorf("v1 lacks %s: %v", k, served["v1"])
		}
	}
	for _, k := range []string{"Lock", "DeploymentRuntimeConfig", "Function"} {
		if !slices.Contains(served["v1beta1"], k) {
			t.Errorf("v1beta1 lacks %s: %v", k, served["v1beta1"])
		}
	}
}
