package action

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// atomicCluster: provider-p at v1, whose PATCHes fail as fail says (by
// call, counting from 0; nil lets the patch through).
func atomicCluster(t *testing.T, fail func(n int) error) (*Change, *Installed) {
	t.Helper()
	ch, in, _ := atomicClusterDyn(t, fail)
	return ch, in
}

func atomicClusterDyn(t *testing.T, fail func(n int) error) (*Change, *Installed, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	c, dyn := fakeClusterDyn(t, provider("provider-p", "r.example.org/org/provider-p:v1", ""))
	n := 0
	dyn.PrependReactor("patch", "providers", func(clienttesting.Action) (bool, runtime.Object, error) {
		err := fail(n)
		n++
		return err != nil, nil, err
	})
	p, err := c.Lookup(context.Background(), "provider-p")
	if err != nil {
		t.Fatal(err)
	}
	return &Change{Cluster: c}, &Installed{Package: p, Image: p.Source}, dyn
}

func unavailable() error { return apierrors.NewServiceUnavailable("etcd is away") }

// TestAtomicRollbackTriesAgain: the rollback's PATCH is sent again while
// the API server fails it, and succeeds.
func TestAtomicRollbackTriesAgain(t *testing.T) {
	ch, in := atomicCluster(t, func(n int) error {
		if n < 2 { // the rollback's first two tries
			return unavailable()
		}
		return nil
	})
	var progress strings.Builder
	ch.Events.Progress = &progress
	cause := errors.New("Healthy=False")
	_, err := ch.rollBack(context.Background(), in.Package, in.Package, "r.example.org/org/provider-p:v2", cause, ApplyOptions{RollbackBudget: 30 * time.Second})
	var ae *AtomicError
	if !errors.As(err, &ae) || ae.RollbackErr != nil {
		t.Fatalf("rollback: %v", err)
	}
	if n := strings.Count(progress.String(), "the rollback failed (etcd is away); trying again"); n != 2 {
		t.Errorf("%d retries said:\n%s", n, progress.String())
	}
}

// TestAtomicRollbackThatFailsSaysHowBack: a rollback the API server keeps
// refusing gives up at its budget, and says where the package points and
// the command that puts it back.
func TestAtomicRollbackThatFailsSaysHowBack(t *testing.T) {
	ch, in := atomicCluster(t, func(n int) error { return unavailable() })
	const target = "r.example.org/org/provider-p:v2"
	_, err := ch.rollBack(context.Background(), in.Package, in.Package, target, errors.New("Healthy=False"), ApplyOptions{RollbackBudget: 1500 * time.Millisecond})
	var ae *AtomicError
	if !errors.As(err, &ae) || ae.RollbackErr == nil {
		t.Fatalf("rollback: %v", err)
	}
	for _, want := range []string{"the rollback to r.example.org/org/provider-p:v1 failed too: gave up after 2s: etcd is away",
		"provider/provider-p points at " + target, "kubectl xpkg upgrade provider/provider-p v1 --force --wait"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestAtomicRollsBackAPatchCutShortThatLanded: the upgrade's PATCH lands,
// but the answer is lost to an interruption: --atomic reads the package,
// sees the new reference, and puts the old one back.
func TestAtomicRollsBackAPatchCutShortThatLanded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	const target = "r.example.org/org/provider-p:v2"
	var dyn *dynamicfake.FakeDynamicClient
	ch, in, dyn := atomicClusterDyn(t, func(n int) error {
		if n > 0 {
			return nil
		}
		// The tracker, not the client: a reactor runs under the fake's lock.
		o, err := dyn.Tracker().Get(providersGVR, "", "provider-p")
		if err != nil {
			t.Error(err)
			return context.Canceled
		}
		u := o.(*unstructured.Unstructured)
		_ = unstructured.SetNestedField(u.Object, target, "spec", "package")
		if err := dyn.Tracker().Update(providersGVR, u, ""); err != nil {
			t.Error(err)
		}
		cancel()
		return context.Canceled
	})
	_, err := ch.Apply(ctx, in, target, ApplyOptions{Atomic: true, RollbackBudget: 10 * time.Second})
	var ae *AtomicError
	if !errors.As(err, &ae) || ae.RollbackErr != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply: %v", err)
	}
	if now, _ := ch.Cluster.Get(context.Background(), "Provider", "provider-p"); now.Source != in.Package.Source {
		t.Errorf("the package points at %s after the rollback", now.Source)
	}
}
