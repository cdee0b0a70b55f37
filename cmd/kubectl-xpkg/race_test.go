package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

// beforePatch runs another writer's edit once, just before the first
// PATCH of the package reaches the API server: inside the window between
// the plugin's read and its write.
type beforePatch struct {
	next http.RoundTripper
	path string
	once sync.Once
	edit func()
}

func (b *beforePatch) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, b.path) {
		b.once.Do(b.edit)
	}
	return b.next.RoundTrip(r)
}

// TestSetPackageLosesARaceOnTheRealAPIServer: another writer changes the
// package between the plugin's read and its PATCH. kube-apiserver refuses
// the JSON patch whose test no longer holds with 422 Invalid and no words
// naming the test: the change must still end as changed by someone else
// (ChangedError: exit 4, nothing changed), not as an invalid request.
func TestSetPackageLosesARaceOnTheRealAPIServer(t *testing.T) {
	l := newLifecycle(t)
	ctx := context.Background()
	for _, race := range []struct {
		name string
		edit func(u *unstructured.Unstructured)
		want string
	}{
		{"reference", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "example.org/race/provider-nop:v0.5.0", "spec", "package")
		}, "now points at example.org/race/provider-nop:v0.5.0"},
		{"spec", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "Manual", "spec", "revisionActivationPolicy")
		}, "spec changed since the change was planned"},
	} {
		t.Run(race.name, func(t *testing.T) {
			name := "race-nop-" + race.name
			l.mgr.Manage(name, pkgmanager.Behaviour{})
			x := clitest.New(t).WithEnv(l.env)
			t.Cleanup(func() { x.Run("uninstall", name) })
			x.Run("install", "provider", "example.org/race/provider-nop:v0.2.1", name).Succeeds(t)

			c := l.connect(t, func(rt http.RoundTripper) http.RoundTripper {
				return &beforePatch{next: rt, path: "/providers/" + name, edit: func() {
					if err := l.editProvider(ctx, name, race.edit); err != nil {
						t.Errorf("the other writer: %v", err)
					}
				}}
			})
			planned, err := c.Get(ctx, "Provider", name)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.SetPackage(ctx, planned, "example.org/race/provider-nop:v0.4.0", false)
			var ce *cluster.ChangedError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), race.want) {
				t.Fatalf("SetPackage after another writer's change: %v; want a ChangedError saying %q", err, race.want)
			}
			if now, _ := c.Get(ctx, "Provider", name); now.Source == "example.org/race/provider-nop:v0.4.0" {
				t.Errorf("the package was changed all the same")
			}
		})
	}
}

// editProvider is another writer's change of a provider: read, edited by
// f, updated, again while it conflicts.
func (l *lifecycle) editProvider(ctx context.Context, name string, f func(u *unstructured.Unstructured)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := l.dyn.Resource(providersGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(u)
		_, err = l.dyn.Resource(providersGVR).Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}

// connect is the plugin's cluster client for the test environment, as
// the verbs build it from kubectl's flags; wrap, when set, wraps its
// transport.
func (l *lifecycle) connect(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper) *cluster.Cluster {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &l.env.Kubeconfig
	if wrap != nil {
		flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
			c.Wrap(wrap)
			return c
		}
	}
	c, err := cluster.Connect(cluster.NewClients(flags), "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}
