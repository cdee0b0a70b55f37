package plugin

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// rootWithFlags builds the plugin's root as main does and parses the
// connection flags the way a command line would set them.
func rootWithFlags(t *testing.T, args ...string) *Root {
	t.Helper()
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	r := newRoot(streams)
	cmd := r.command()
	args = append(args, "--cache-dir", t.TempDir())
	if err := cmd.PersistentFlags().Parse(args); err != nil {
		t.Fatal(err)
	}
	return r
}

func provider(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("pkg.crossplane.io/v1")
	u.SetKind("Provider")
	u.SetName(name)
	_ = unstructured.SetNestedField(u.Object, "xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0", "spec", "package")
	return u
}

// TestClientFactoryProviderLifecycle creates, reads and deletes a Provider in
// the real API server through the plugin's own clients, selected by --context.
func TestClientFactoryProviderLifecycle(t *testing.T) {
	env := testenv.Get(t)
	clients := cluster.NewClients(rootWithFlags(t, "--kubeconfig", env.Kubeconfig, "--context", testenv.ContextAdmin).ConfigFlags)
	ctx := context.Background()

	mapper, err := clients.Mapper()
	if err != nil {
		t.Fatal(err)
	}
	mapping, err := mapper.RESTMapping(schema.GroupKind{Group: "pkg.crossplane.io", Kind: "Provider"}, "v1")
	if err != nil {
		t.Fatalf("the discovery-backed mapper does not resolve Provider: %v", err)
	}
	dyn, err := clients.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	providers := dyn.Resource(mapping.Resource)

	const name = "factory-lifecycle-provider-nop"
	created, err := providers.Create(ctx, provider(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = providers.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	got, err := providers.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.GetUID() != created.GetUID() {
		t.Errorf("read back a different object: uid %s, created %s", got.GetUID(), created.GetUID())
	}
	// The server applied the CRD's defaults: proof that the real schema is loaded.
	policy, _, _ := unstructured.NestedString(got.Object, "spec", "revisionActivationPolicy")
	limit, _, _ := unstructured.NestedInt64(got.Object, "spec", "revisionHistoryLimit")
	if policy != "Automatic" || limit != 1 {
		t.Errorf("server defaults: revisionActivationPolicy=%q revisionHistoryLimit=%d, want Automatic and 1", policy, limit)
	}

	if err := providers.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := providers.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete, get returned %v; want NotFound", err)
	}
}

// TestRBACDenialIsOneLine selects the non-admin user with --context and shows
// the server's denial as the one line a user would read.
func TestRBACDenialIsOneLine(t *testing.T) {
	env := testenv.Get(t)
	clients := cluster.NewClients(rootWithFlags(t, "--kubeconfig", env.Kubeconfig, "--context", testenv.ContextUser).ConfigFlags)
	dyn, err := clients.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	_, err = dyn.Resource(gvr).Create(context.Background(), provider("rbac-denied"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("create as %s: got %v, want Forbidden", testenv.ContextUser, err)
	}
	msg := exit.Message(err)
	if strings.Contains(msg, "\n") {
		t.Errorf("message spans lines: %q", msg)
	}
	for _, want := range []string{`User "xpkg-dev" cannot create resource "providers"`, `API group "pkg.crossplane.io"`, "RBAC", "--context"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if exit.Code(err) != exit.Error {
		t.Errorf("exit code %d", exit.Code(err))
	}
}

func TestRootHelpGroupsAndDisplayName(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd := NewCmdRoot(streams)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kubectl xpkg [command]") {
		t.Errorf("help does not use the kubectl display name:\n%s", out)
	}
	// Every cli-runtime connection flag is present.
	for _, f := range []string{"kubeconfig", "context", "cluster", "user", "namespace", "as", "as-group", "as-uid",
		"server", "token", "certificate-authority", "insecure-skip-tls-verify", "request-timeout", "cache-dir", "v"} {
		if cmd.PersistentFlags().Lookup(f) == nil {
			t.Errorf("missing persistent flag --%s", f)
		}
	}
}

func TestVersionRejectsUnknownOutput(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd := NewCmdRoot(streams)
	cmd.SetArgs([]string{"version", "--client", "-o", "table"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), `--output must be json or yaml, not "table"`) {
		t.Fatalf("err = %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote output before failing: %q", out)
	}
}

// TestHelpIsNormalisedAsKubectls: every command's help goes through
// kubectl's templates: a Long paragraph is one line (the terminal or the
// help writer wraps it), lists are Markdown lists rendered as kubectl
// renders them, and every example line is indented by exactly two spaces.
func TestHelpIsNormalisedAsKubectls(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdRoot(streams)
	cmds := append(root.Commands(), root)
	for _, c := range cmds {
		lines := strings.Split(longDesc(c), "\n")
		for i := 1; i < len(lines); i++ {
			prev, cur := lines[i-1], lines[i]
			if prev != "" && cur != "" && !strings.HasPrefix(strings.TrimSpace(cur), "*") {
				t.Errorf("%s: a paragraph of Long is broken over lines:\n%s\n%s", c.Name(), prev, cur)
			}
		}
		for _, l := range strings.Split(c.Example, "\n") {
			if c.Example == "" {
				break
			}
			if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ") || strings.TrimSpace(l) != l[2:] {
				t.Errorf("%s: example line %q is not indented by two spaces, trimmed", c.Name(), l)
			}
		}
	}
	out, _ := findCommand(t, root, "outdated")
	if !strings.Contains(longDesc(out), "\n  *  CURRENT: the version its active revision runs\n") {
		t.Errorf("outdated's list of columns is no list:\n%s", longDesc(out))
	}
}

func findCommand(t *testing.T, root *cobra.Command, name string) (*cobra.Command, []string) {
	t.Helper()
	c, rest, err := root.Find([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	return c, rest
}
