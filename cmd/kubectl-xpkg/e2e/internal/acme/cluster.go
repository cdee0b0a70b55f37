package acme

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// Cluster is one test's view of the environment with the real Crossplane:
// a client, the registry and the plugin's runner.
type Cluster struct {
	Dyn dynamic.Interface
	Reg *testenv.Registry
	X   *clitest.Test
	// Crossplane is the release running.
	Crossplane string
}

// New gets the environment of the package's testenv.Main, its registry
// and Crossplane.
func New(t *testing.T) *Cluster {
	t.Helper()
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	xp := crossplane.Get(t, env)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{Dyn: dyn, Reg: reg, X: clitest.New(t).WithEnv(env), Crossplane: xp.Version}
}

// Push pushes the package of pkgYAML to the registry as
// repo/provider-acme:version and returns its reference.
func (c *Cluster) Push(repo, version, pkgYAML string) (string, error) {
	img, err := fixture.Image([]byte(pkgYAML))
	if err != nil {
		return "", err
	}
	ref := c.Reg.Host + "/" + repo + "/" + Provider + ":" + version
	return ref, fixture.Push(ref, img, remote.WithAuth(&authn.Basic{Username: c.Reg.Username, Password: c.Reg.Password}))
}

// Run runs kubectl-xpkg with args and logs the transcript.
func (c *Cluster) Run(t *testing.T, args ...string) *clitest.Result {
	t.Helper()
	r := c.X.Run(args...)
	t.Logf("$ kubectl xpkg %s (exit %d)\n%s%s", strings.Join(args, " "), r.ExitCode, r.Stdout, r.Stderr)
	return r
}

// Apply writes text to a file named name and applies it with kubectl,
// logging the transcript; it must succeed.
func (c *Cluster) Apply(t *testing.T, name, text string) {
	t.Helper()
	file := filepath.Join(WriteFiles(t, map[string]string{name: text}), name)
	k := c.X.Kubectl("apply", "-f", file)
	t.Logf("$ kubectl apply -f %s (exit %d)\n%s%s", name, k.ExitCode, k.Stdout, k.Stderr)
	k.Succeeds(t)
}

// States are the MRDs' spec.state by name ("Inactive" where unset, as
// Crossplane defaults it).
func (c *Cluster) States(ctx context.Context) (map[string]string, error) {
	l, err := c.Dyn.Resource(MRDs).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, u := range l.Items {
		st, _, _ := unstructured.NestedString(u.Object, "spec", "state")
		if st == "" {
			st = "Inactive"
		}
		out[u.GetName()] = st
	}
	return out, nil
}

// CRDExists says whether the CRD name exists.
func (c *Cluster) CRDExists(ctx context.Context, name string) (bool, error) {
	_, err := c.Dyn.Resource(CRDs).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// Create creates the object of yamlText with the dynamic client, deleted
// when the test ends.
func (c *Cluster) Create(t *testing.T, gvr schema.GroupVersionResource, yamlText string) {
	t.Helper()
	u := Decode(t, yamlText)
	ctx := context.Background()
	if _, err := c.Dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	t.Cleanup(func() {
		err := c.Dyn.Resource(gvr).Delete(ctx, u.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	})
}

// Decode reads one object of YAML.
func Decode(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%v:\n%s", err, text)
	}
	return &unstructured.Unstructured{Object: m}
}

// WriteFiles writes each file (name to YAML) into a new directory.
func WriteFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// PrintedPolicy splits `activation plan`'s output into its comment lines
// and the policy below them: every comment comes first.
func PrintedPolicy(t *testing.T, out string) (comments string, policy *unstructured.Unstructured) {
	t.Helper()
	var body []string
	for _, l := range strings.SplitAfter(out, "\n") {
		switch {
		case strings.HasPrefix(l, "#") && len(body) == 0:
			comments += l
		case strings.HasPrefix(l, "#"):
			t.Fatalf("a comment after the policy began: %q\n%s", l, out)
		default:
			body = append(body, l)
		}
	}
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(strings.Join(body, "")), &m); err != nil {
		t.Fatalf("the policy is not YAML: %v\n%s", err, out)
	}
	return comments, &unstructured.Unstructured{Object: m}
}

// Contains fails the test for each of wants that got lacks.
func Contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}
