package e2e

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// installManaged is where every route to a stuck deletion starts:
// provider-nop installed from ref, its CRD established, objs made by the
// stand-in provider, which then stops, as the provider's pods stop with
// it. It returns the stand-in, the objects as they were made and the
// CRD's UID.
func (c cluster) installManaged(x *clitest.Test, ref string, objs []managed) (*standInProvider, map[string]*unstructured.Unstructured, types.UID) {
	c.t.Helper()
	x.Run("install", ref, "--wait=5m").Succeeds(c.t)
	if !c.awaitCRD(nopCRD, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
		c.t.Fatalf("CRD %s is not established", nopCRD)
	}
	p := newStandInProvider(c.t, c, nopGVR)
	p.start()
	c.createManaged(p, objs)
	p.stop()
	return p, c.nopResources(), c.crdUID()
}

// prune deletes provider pkg as a GitOps prune would and waits until its
// CRD is being deleted, held by objs, which it returns as they are then.
func (c cluster) prune(x *clitest.Test, pkg string, objs []managed) map[string]*unstructured.Unstructured {
	c.t.Helper()
	x.Kubectl("delete", "provider.pkg.crossplane.io", pkg, "--timeout=3m").Succeeds(c.t)
	c.awaitTerminating("its provider was deleted")
	return c.awaitHeld(objs)
}
