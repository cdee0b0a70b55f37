package e2e

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// stages is one test's provider-nop with its ProviderConfig kinds, an
// object in each stage of the teardown: a legacy claim, its composite,
// which controls the managed resource composed; the managed resource
// plain; the ProviderConfig both use, and their ProviderConfigUsages.
type stages struct {
	*teardown
	config    string
	claim, xr *unstructured.Unstructured
	// usages are the ProviderConfigUsages' names: the managed resources'
	// UIDs.
	usages []string
}

// setUpStages installs the fixture of provider-nop with the
// ProviderConfig kinds (pushed to e2e/<name>/provider-nop), creates the
// ProviderConfig <prefix>-config, starts the stand-in (serving the
// ProviderConfigs too), creates the two managed resources using it, the
// claim <prefix>-claim with its composite, which it makes the controller
// of <prefix>-composed, and waits until the ProviderConfig is held by its
// two users. The clean-up releases and deletes what is left.
func setUpStages(t *testing.T, name, prefix string) *stages {
	t.Helper()
	env, reg, c, x := start(t)
	nop := "e2e-" + name + "-provider-nop"
	ref := pushFixNop(t, reg, "e2e/"+name+"/provider-nop", "v0.4.0", providerConfigCRDs...)
	p := newStandInProvider(t, c, nopGVR).withConfigs()
	t.Cleanup(func() {
		p.stop()
		c.release(t, pcuGVR)
		c.release(t, pcGVR)
		cleanUpFix(t, env, c, nop)
		for _, crd := range []string{pcCRD, pcuCRD} {
			if !c.awaitCRD(crd, time.Minute, func(u *unstructured.Unstructured) bool { return u == nil }) {
				t.Errorf("clean-up: CRD %s is still there", crd)
			}
		}
	})
	x.Run("install", ref, "--wait=5m").Succeeds(t)
	for _, crd := range []string{nopCRD, pcCRD, pcuCRD} {
		if !c.awaitCRD(crd, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
			t.Fatalf("CRD %s is not established", crd)
		}
	}
	ctx := context.Background()
	config := prefix + "-config"
	pc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nop.crossplane.io/v1alpha1", "kind": "ProviderConfig",
		"metadata": map[string]any{"name": config}, "spec": map[string]any{"credentials": map[string]any{"source": "None"}},
	}}
	if err := waitFor(time.Minute, func() error {
		_, err := c.dyn.Resource(pcGVR).Create(ctx, pc, metav1.CreateOptions{})
		return err
	}); err != nil {
		t.Fatalf("create ProviderConfig %s: %v", config, err)
	}
	uses := map[string]any{"providerConfigRef": map[string]any{"name": config}}
	composed := managed{name: prefix + "-composed", external: prefix + "-composed", spec: uses}
	plain := managed{name: prefix + "-plain", external: prefix + "-plain", spec: uses}
	p.start()
	c.createManaged(p, []managed{composed, plain})
	claim, xr := setUpLegacyClaim(t, c, prefix+"-claim")
	c.controlledBy(t, composed.name, xr)

	st := &stages{teardown: &teardown{env: env, c: c, x: x, p: p, nop: nop, objs: []managed{composed, plain}}, config: config, claim: claim, xr: xr}
	live := c.nopResources()
	for _, m := range st.objs {
		st.usages = append(st.usages, string(live[m.name].GetUID()))
	}
	if err := waitFor(time.Minute, func() error {
		pc := c.lookUp(pcGVR, config)
		if users, _, _ := unstructured.NestedInt64(pc.Object, "status", "users"); !slices.Contains(pc.GetFinalizers(), inUseFinalizer) || users != 2 {
			return errors.New("the ProviderConfig is not held by its two users")
		}
		for _, u := range st.usages {
			if c.lookUp(pcuGVR, u) == nil {
				return errors.New("no ProviderConfigUsage " + u)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st.external = p.snapshot()
	return st
}

// keys are the recorder's keys of every object of the teardown, and of
// the provider.
func (st *stages) keys() (claim, xr string, mrs, usages []string, pc, provider string) {
	for _, m := range st.objs {
		mrs = append(mrs, "nopresources/"+m.name)
	}
	for _, u := range st.usages {
		usages = append(usages, "providerconfigusages/"+u)
	}
	return "legacynets/" + st.claim.GetName(), "xlegacynets/" + st.xr.GetName(), mrs, usages, "providerconfigs/" + st.config, "providers/" + st.nop
}

// record starts the deletion recorder on every kind of the teardown.
func (st *stages) record(t *testing.T) *deletionRecorder {
	return st.c.recordDeletions(t, claimGVR, xlegacyGVR, nopGVR, pcuGVR, pcGVR, gvr("providers"))
}

// inOrder: the teardown went stage by stage, each waiting for the last
// to go: the claim's deletion first (its controller deletes the
// composite), the claim gone before the managed resources' deletions and
// the composite too, each managed resource gone before its usage's
// deletion, the usages gone before the ProviderConfig's, which its
// finalizer held, gone before the provider's deletion.
func (st *stages) inOrder(t *testing.T, rec *deletionRecorder, start time.Time) {
	t.Helper()
	claim, xr, mrs, usages, pc, provider := st.keys()
	all := append(append(append([]string{claim, xr}, mrs...), usages...), pc, provider)
	if err := rec.await(30*time.Second, all...); err != nil {
		t.Error(err)
	}
	d := map[string]deletion{}
	for _, k := range all {
		d[k], _ = rec.get(k)
		t.Logf("%s: deletion started at revision %d (+%s), gone at %d (+%s)", k, d[k].startRV, d[k].start.Sub(start).Round(time.Millisecond), d[k].goneRV, d[k].gone.Sub(start).Round(time.Millisecond))
	}
	type step struct {
		what        string
		first, then int64
	}
	steps := []step{
		{"the claim's deletion starts before the composite's", d[claim].startRV, d[xr].startRV},
		{"the ProviderConfig, held by its finalizer, goes after its deletion starts", d[pc].startRV, d[pc].goneRV},
		{"the ProviderConfig is gone before the provider's deletion starts", d[pc].goneRV, d[provider].startRV},
	}
	for i, mr := range mrs {
		// Its usage (named after its UID, owned by it) goes after it:
		// the garbage collector's or the teardown's deletion, whichever
		// comes first. Another resource's usage may go before it does.
		steps = append(steps,
			step{"the claim is gone before the deletion of " + mr + " starts", d[claim].goneRV, d[mr].startRV},
			step{"the composite is gone before the deletion of " + mr + " starts", d[xr].goneRV, d[mr].startRV},
			step{mr + " is gone before the deletion of its usage " + usages[i] + " starts", d[mr].goneRV, d[usages[i]].startRV})
	}
	for _, u := range usages {
		steps = append(steps, step{u + " is gone before the ProviderConfig's deletion starts", d[u].goneRV, d[pc].startRV})
	}
	for _, k := range all {
		if k != pc && k != provider {
			steps = append(steps, step{k + " is gone before the ProviderConfig's deletion starts", d[k].goneRV, d[pc].startRV})
		}
	}
	for _, s := range steps {
		if s.first == 0 || s.then == 0 || s.first >= s.then {
			t.Errorf("not so: %s (revisions %d, %d)", s.what, s.first, s.then)
		}
	}
}

// nothingLeft: no claim, composite or managed resource; the provider and
// every CRD it made gone; the XRD's CRDs, not the provider's, still
// there.
func (st *stages) nothingLeft(t *testing.T) {
	t.Helper()
	st.gone(t)
	ctx := context.Background()
	if l, err := st.c.dyn.Resource(claimGVR).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("claims after the teardown: %v (%v)", l, err)
	}
	if l, err := st.c.dyn.Resource(xlegacyGVR).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("composites after the teardown: %v (%v)", l, err)
	}
	for _, crd := range []string{pcCRD, pcuCRD} {
		if st.c.lookUp(crdsGVR, crd) != nil {
			t.Errorf("CRD %s is still there when the teardown says it is done", crd)
		}
	}
	for _, crd := range []string{claimCRD, xlegacyCRD} {
		if u := st.c.lookUp(crdsGVR, crd); u == nil || u.GetDeletionTimestamp() != nil {
			t.Errorf("the XRD's CRD %s is gone or being deleted after the teardown", crd)
		}
	}
}

// run carries the teardown out in mode, the recorder watching, and checks
// the order and that nothing is left.
func (st *stages) run(t *testing.T, mode string) {
	t.Helper()
	rec := st.record(t)
	start := time.Now()
	r := st.x.Run("uninstall", "provider/"+st.nop, "--with-resources="+mode, "--yes", "--wait=3m")
	t.Logf("transcript (%s):\n$ kubectl xpkg uninstall provider/%s --with-resources=%s --yes --wait=3m\n%s%s",
		time.Since(start).Round(time.Second), st.nop, mode, r.Stdout, r.Stderr)
	r.Succeeds(t)
	contains(t, "uninstall --with-resources="+mode, r.Stdout, "1 of the claims deleted (LegacyNet 1)", "1 of the composites deleted (XLegacyNet 1)",
		"2 managed resources deleted (NopResource 2)", "2 other objects deleted (ProviderConfigUsage 2)", "1 of the ProviderConfigs deleted (ProviderConfig 1)",
		"provider/"+st.nop+" deleted")
	st.inOrder(t, rec, start)
	st.nothingLeft(t)
}

// TestUninstallWithResourcesStages: provider-nop with a ProviderConfig
// and its ProviderConfigUsages, and a claim of a v1 XRD whose composite
// controls one of the two managed resources. The dry run plans every
// stage; carried out, the claim goes first, then the composite, the
// managed resources (their external resources deleted), their usages,
// and the ProviderConfig last before the provider; nothing is left.
func TestUninstallWithResourcesStages(t *testing.T) {
	st := setUpStages(t, "teardown-stages", "stg")
	r := st.x.Run("uninstall", "provider/"+st.nop, "--with-resources=delete", "--dry-run")
	t.Logf("transcript:\n$ kubectl xpkg uninstall provider/%s --with-resources=delete --dry-run\n%s%s", st.nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	contains(t, "uninstall --with-resources=delete --dry-run", r.Stdout,
		"1 claims, then 1 composites, then 2 managed resources, then 2 other objects, then 1 ProviderConfigs, then provider/"+st.nop,
		"LegacyNet.e2e.example.org (1, claims):", "XLegacyNet.e2e.example.org (1, composites):", nopKind+" (2, managed resources):",
		"ProviderConfigUsage.nop.crossplane.io (2, other objects):", "ProviderConfig.nop.crossplane.io (1, ProviderConfigs):")

	st.run(t, "delete")
	want := map[string]externalResource{}
	for _, m := range st.objs {
		want[m.external] = externalResource{Created: 1, Deleted: 1}
	}
	if got := st.p.snapshot(); !maps.Equal(got, want) {
		t.Errorf("the external system after the teardown: %+v, want %+v", got, want)
	}
}

// TestUninstallWithResourcesStagesOrphan: the objects of
// TestUninstallWithResourcesStages, --with-resources=orphan. Interrupted
// (SIGINT) before its first deletion, while it sets the second managed
// resource's policies (a webhook holds that write), then again at its
// first deletion (the claim's, held so), it puts back the policies it
// set, and nothing is deleted. Run to the end, it goes stage by stage as
// with delete, and every external resource is kept.
func TestUninstallWithResourcesStagesOrphan(t *testing.T) {
	st := setUpStages(t, "teardown-stages-orphan", "sto")
	args := []string{"uninstall", "provider/" + st.nop, "--with-resources=orphan", "--yes", "--wait=3m"}
	ctx := context.Background()
	dry := metav1.DryRunAll

	probe := []byte(`{"metadata":{"labels":{"e2e-probe":"x"}}}`)
	h := st.c.holdAt(t, nopGVR, "UPDATE", 2, func() error {
		_, err := st.c.dyn.Resource(nopGVR).Patch(ctx, st.objs[0].name, types.MergePatchType, probe, metav1.PatchOptions{DryRun: []string{dry}})
		return err
	})
	r := interruptWhen(t, st.x, "while the webhook held the second managed resource's policies", held(h), args...)
	st.putBack(t, "uninstall --with-resources=orphan, interrupted while setting policies", r, 1)
	h.remove()

	h = st.c.holdAt(t, claimGVR, "DELETE", 1, func() error {
		return st.c.dyn.Resource(claimGVR).Namespace(claimNS).Delete(ctx, st.claim.GetName(), metav1.DeleteOptions{DryRun: []string{dry}})
	})
	r = interruptWhen(t, st.x, "while the webhook held the claim's deletion", held(h), args...)
	st.putBack(t, "uninstall --with-resources=orphan, interrupted at its first deletion", r, 2)
	h.remove()

	st.run(t, "orphan")
	want := map[string]externalResource{}
	for _, m := range st.objs {
		want[m.external] = externalResource{Created: 1, Present: true}
	}
	if got := st.p.snapshot(); !maps.Equal(got, want) {
		t.Errorf("the external system after the teardown: %+v, want %+v", got, want)
	}
}

func held(h *holdWebhook) func(*clitest.Running) error {
	return func(*clitest.Running) error {
		select {
		case <-h.held:
			return nil
		default:
			return errors.New("the webhook holds no request yet")
		}
	}
}

// putBack: the interrupted teardown exits 130 saying it put back the
// policies of n managed resources; each is as it was (deletionPolicy
// Delete, managementPolicies [*]) and not being deleted; the claim, its
// composite, the ProviderConfig and the provider are all there, and the
// external system is as it was.
func (st *stages) putBack(t *testing.T, what string, r *clitest.Result, n int) {
	t.Helper()
	r.Fails(t, 130)
	contains(t, what, r.Stderr, "the teardown stopped before deleting anything: the policies of "+string(rune('0'+n))+" managed resource(s) were put back")
	live := st.c.nopResources()
	for _, m := range st.objs {
		u := live[m.name]
		if u == nil || u.GetDeletionTimestamp() != nil {
			t.Errorf("%s: NopResource %s is gone or being deleted: %v", what, m.name, u)
			continue
		}
		if dp, _, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy"); dp != "Delete" || !slices.Equal(policies(u), []string{"*"}) {
			t.Errorf("%s: NopResource %s has deletionPolicy %q, managementPolicies %v; want Delete and [*], as they were", what, m.name, dp, policies(u))
		}
	}
	if u, err := st.c.dyn.Resource(claimGVR).Namespace(claimNS).Get(context.Background(), st.claim.GetName(), metav1.GetOptions{}); err != nil || u.GetDeletionTimestamp() != nil {
		t.Errorf("%s: the claim is gone or being deleted: %v", what, err)
	}
	for _, u := range []*unstructured.Unstructured{st.c.lookUp(xlegacyGVR, st.xr.GetName()), st.c.lookUp(pcGVR, st.config), st.c.get("providers", st.nop)} {
		if u == nil || u.GetDeletionTimestamp() != nil {
			t.Errorf("%s: an object is gone or being deleted: %v", what, u)
		}
	}
	if got := st.p.snapshot(); !maps.Equal(got, st.external) {
		t.Errorf("%s: the external system is %+v, was %+v", what, got, st.external)
	}
}
