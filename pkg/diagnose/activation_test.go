package diagnose

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// The kinds of the provider the tests install, served by the fake.
var awsLists = map[schema.GroupVersionResource]string{
	{Group: "s3.aws.example.io", Version: "v1beta1", Resource: "buckets"}:        "BucketList",
	{Group: "s3.aws.example.io", Version: "v1beta1", Resource: "bucketpolicies"}: "BucketPolicyList",
	{Group: "sqs.aws.example.io", Version: "v1beta1", Resource: "queues"}:        "QueueList",
	{Group: "ec2.aws.example.io", Version: "v1beta1", Resource: "vpcs"}:          "VPCList",
}

// mrd is an MRD of kind in group, in state, made by provider/provider.
func mrd(group, kind, plural, state, provider string) *unstructured.Unstructured {
	u := fakecluster.Object("apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition", plural+"."+group, map[string]any{
		"spec": map[string]any{"group": group, "state": state, "scope": "Cluster",
			"names":    map[string]any{"kind": kind, "plural": plural},
			"versions": []any{map[string]any{"name": "v1beta1", "served": true, "storage": true}}},
	})
	u.SetOwnerReferences(nil)
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider", "name": provider, "uid": "p-" + provider}}, "metadata", "ownerReferences")
	return u
}

// compositionOf composes the kinds given as "apiVersion kind", with
// function-patch-and-transform's input.
func compositionOf(name string, kinds ...string) *unstructured.Unstructured {
	var resources []any
	for i, k := range kinds {
		av, kind, _ := strings.Cut(k, " ")
		resources = append(resources, map[string]any{"name": fmt.Sprint("r", i), "base": map[string]any{"apiVersion": av, "kind": kind}})
	}
	return fakecluster.Object("apiextensions.crossplane.io/v1", "Composition", name, map[string]any{"spec": map[string]any{
		"compositeTypeRef": map[string]any{"apiVersion": "example.org/v1", "kind": "XApp"},
		"mode":             "Pipeline",
		"pipeline": []any{map[string]any{"step": "pt", "functionRef": map[string]any{"name": "function-patch-and-transform"},
			"input": map[string]any{"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": resources}}},
	}})
}

func mrap(name string, activate ...string) *unstructured.Unstructured {
	var a []any
	for _, e := range activate {
		a = append(a, e)
	}
	return fakecluster.Object("apiextensions.crossplane.io/v1alpha1", "ManagedResourceActivationPolicy", name, map[string]any{"spec": map[string]any{"activate": a}})
}

func examine(t *testing.T, f *fakecluster.Fake) *Report {
	t.Helper()
	rep, _ := Examine(context.Background(), f.Cluster(), "crossplane-system")
	return rep
}

func ofRule(r *Report, rule string) []findings.Finding {
	var out []findings.Finding
	for _, f := range r.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func says(t *testing.T, what, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%s does not say %q:\n%s", what, p, text)
		}
	}
}

// TestInactiveComposedKind: one blocking finding per kind Compositions
// compose whose MRD is Inactive (naming the Compositions, the MRD, its
// provider and the entry that activates it) or that nothing defines;
// none for an active kind, a kind a CRD serves, or Kubernetes' own.
func TestInactiveComposedKind(t *testing.T) {
	f := fakecluster.NewWithLists(awsLists,
		mrd("s3.aws.example.io", "Bucket", "buckets", "Inactive", "provider-aws-s3"),
		mrd("ec2.aws.example.io", "VPC", "vpcs", "Active", "provider-aws-ec2"),
		fakecluster.CRD("example.org", "XNetwork", "xnetworks", "v1"),
		compositionOf("storage", "s3.aws.example.io/v1beta1 Bucket", "ec2.aws.example.io/v1beta1 VPC"),
		compositionOf("archive", "s3.aws.example.io/v1beta1 Bucket", "apps/v1 Deployment", "v1 ConfigMap"),
		compositionOf("network", "example.org/v1 XNetwork", "ec2.aws.example.io/v1beta1 VPC", "rbac.authorization.k8s.io/v1 Role"),
		compositionOf("cache", "cache.example.net/v1 Redis"),
	)
	r := examine(t, f)
	if len(r.Unread) > 0 {
		t.Fatalf("unread: %v", r.Unread)
	}
	fs := ofRule(r, findings.RuleInactiveComposedKind)
	if len(fs) != 2 {
		t.Fatalf("%d findings, want 2 (Bucket, Redis): %+v", len(fs), r.Findings)
	}
	bucket, redis := fs[0], fs[1]
	if bucket.Severity != findings.Blocking || bucket.Object != "managedresourcedefinition/buckets.s3.aws.example.io" || *bucket.Count != 2 {
		t.Errorf("bucket: %+v", bucket)
	}
	says(t, "the Bucket finding", bucket.Message, "2 Compositions (archive, storage) compose Bucket.s3.aws.example.io",
		"ManagedResourceDefinition buckets.s3.aws.example.io (made by provider/provider-aws-s3) is Inactive",
		"composite resources never become ready",
		`add "buckets.s3.aws.example.io" to the spec.activate of an MRAP`, "kubectl xpkg activation plan")
	says(t, "the Redis finding", redis.Message, "Composition cache composes Redis.cache.example.net", "no installed provider defines it")
	if redis.Object != "Redis.cache.example.net" || *redis.Count != 1 {
		t.Errorf("redis: %+v", redis)
	}
	var out strings.Builder
	if err := findings.Write(&out, "Doctor", r.Findings); err != nil {
		t.Fatal(err)
	}
	says(t, "doctor's text", out.String(), "[inactive-composed-kind]", "storage", "Bucket.s3.aws.example.io", "buckets.s3.aws.example.io")
	if !r.Blocking() {
		t.Error("not blocking")
	}
}

// TestInactiveComposedKindPolicyPending: an Inactive MRD a policy matches
// already is Crossplane's to activate: the finding says so.
func TestInactiveComposedKindPolicyPending(t *testing.T) {
	r := examine(t, fakecluster.NewWithLists(awsLists,
		mrd("s3.aws.example.io", "Bucket", "buckets", "Inactive", "provider-aws-s3"),
		compositionOf("storage", "s3.aws.example.io/v1beta1 Bucket"), mrap("storage", "*.s3.aws.example.io")))
	fs := ofRule(r, findings.RuleInactiveComposedKind)
	if len(fs) != 1 {
		t.Fatalf("%+v", r.Findings)
	}
	says(t, "the finding", fs[0].Message, `ManagedResourceActivationPolicy storage activates it ("*.s3.aws.example.io"), yet Crossplane has not`)
}

// TestDefaultPolicyActivatesAll: under the default policy (*) every MRD is
// active: nothing composed is inactive, the pattern matches; the active
// MRDs with no object that nothing composes are counted, with one LIST of
// one object each for those no Composition composes, and one list each of
// Compositions and MRAPs.
func TestDefaultPolicyActivatesAll(t *testing.T) {
	queue := fakecluster.Object("sqs.aws.example.io/v1beta1", "Queue", "jobs", nil)
	f := fakecluster.NewWithLists(awsLists,
		mrd("s3.aws.example.io", "Bucket", "buckets", "Active", "provider-aws-s3"),
		mrd("s3.aws.example.io", "BucketPolicy", "bucketpolicies", "Active", "provider-aws-s3"),
		mrd("sqs.aws.example.io", "Queue", "queues", "Active", "provider-aws-sqs"),
		mrd("ec2.aws.example.io", "VPC", "vpcs", "Active", "provider-aws-ec2"),
		fakecluster.CRD("apiextensions.k8s.io", "Other", "others", "v1"),
		queue, compositionOf("storage", "s3.aws.example.io/v1beta1 Bucket"), mrap("default", "*"))
	r := examine(t, f)
	if len(r.Unread) > 0 {
		t.Fatalf("unread: %v", r.Unread)
	}
	for _, rule := range []string{findings.RuleInactiveComposedKind, findings.RuleActivationUnmatched} {
		if fs := ofRule(r, rule); len(fs) > 0 {
			t.Errorf("%s under the default policy: %+v", rule, fs)
		}
	}
	fs := ofRule(r, findings.RuleActivationUnused)
	if len(fs) != 1 || fs[0].Severity != findings.Info || *fs[0].Count != 2 {
		t.Fatalf("unused: %+v", r.Findings)
	}
	says(t, "the unused finding", fs[0].Message, "2 active ManagedResourceDefinitions have no object and no Composition composes their kind: bucketpolicies.s3.aws.example.io, vpcs.ec2.aws.example.io",
		"Each costs a CRD, 2 of the cluster's 2", "Crossplane cannot deactivate an MRD yet (crossplane#7205)",
		"ManagedResourceActivationPolicy default (activate *) activates 2 of them")
	reqs := map[string]int{}
	for _, q := range f.Requests() {
		reqs[q]++
	}
	for q, n := range map[string]int{
		"GET /apis/apiextensions.crossplane.io/v1/compositions":                            1,
		"GET /apis/apiextensions.crossplane.io/v1alpha1/managedresourceactivationpolicies": 1,
		"GET /apis/apiextensions.crossplane.io/v1alpha1/managedresourcedefinitions":        1,
		"GET /apis/s3.aws.example.io/v1beta1/bucketpolicies":                               1,
		"GET /apis/sqs.aws.example.io/v1beta1/queues":                                      1,
		"GET /apis/ec2.aws.example.io/v1beta1/vpcs":                                        1,
		"GET /apis/s3.aws.example.io/v1beta1/buckets":                                      0, // composed: not counted
	} {
		if reqs[q] != n {
			t.Errorf("%d requests %s, want %d; all: %v", reqs[q], q, n, reqs)
		}
	}
}

// TestActivationPatternUnmatched: an entry that matches no MRD is named,
// with the MRD names close to it; an entry that matches is not.
func TestActivationPatternUnmatched(t *testing.T) {
	r := examine(t, fakecluster.NewWithLists(awsLists,
		mrd("s3.aws.example.io", "Bucket", "buckets", "Active", "provider-aws-s3"),
		mrd("s3.aws.example.io", "BucketPolicy", "bucketpolicies", "Active", "provider-aws-s3"),
		mrd("sqs.aws.example.io", "Queue", "queues", "Inactive", "provider-aws-sqs"),
		mrap("storage", "bucket.s3.aws.example.io", "bucketpolicy.s3.aws.example.io", "*.s3.aws.exmple.io", "*.aws.example.io", "topics.sns.aws.example.io")))
	fs := ofRule(r, findings.RuleActivationUnmatched)
	if len(fs) != 4 {
		t.Fatalf("%d findings, want 4: %+v", len(fs), r.Findings)
	}
	for i, want := range [][]string{
		{`ManagedResourceActivationPolicy storage: its activate entry "bucket.s3.aws.example.io" matches no ManagedResourceDefinition`, `did you mean "buckets.s3.aws.example.io"?`},
		{`"bucketpolicy.s3.aws.example.io"`, `did you mean "bucketpolicies.s3.aws.example.io"?`},
		{`"*.s3.aws.exmple.io"`, `did you mean "*.s3.aws.example.io"?`},
		{`"topics.sns.aws.example.io"`, "install the provider whose kinds it names"},
	} {
		says(t, "finding "+fmt.Sprint(i), fs[i].Message, want...)
		if fs[i].Severity != findings.Warning || fs[i].Object != "managedresourceactivationpolicy/storage" {
			t.Errorf("finding %d: %+v", i, fs[i])
		}
	}
}

// TestActivationWithoutMRDs: Crossplane v1.x and v2.0 serve no MRDs: the
// activation rules find nothing, read nothing more and add no error, even
// where a Composition composes a kind nothing defines.
func TestActivationWithoutMRDs(t *testing.T) {
	f := fakecluster.New(compositionOf("cache", "cache.example.net/v1 Redis"), mrap("storage", "bucket.s3.aws.example.io"))
	f.Dynamic.PrependReactor("list", "managedresourcedefinitions", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "apiextensions.crossplane.io", Resource: "managedresourcedefinitions"}, "")
	})
	r := examine(t, f)
	if len(r.Findings) > 0 || len(r.Unread) > 0 {
		t.Errorf("findings %+v, unread %v", r.Findings, r.Unread)
	}
	for _, q := range f.Requests() {
		if strings.Contains(q, "compositions") || strings.Contains(q, "activationpolicies") {
			t.Errorf("read %s", q)
		}
	}
}

// TestActivationReadsFail: Compositions that cannot be read are one
// Unread line and no finding of theirs; CRDs that cannot be read judge no
// kind undefined.
func TestActivationReadsFail(t *testing.T) {
	forbid := func(f *fakecluster.Fake, resource string) {
		f.Dynamic.PrependReactor("list", resource, func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", fmt.Errorf("RBAC"))
		})
	}
	objs := []*unstructured.Unstructured{mrd("s3.aws.example.io", "Bucket", "buckets", "Inactive", "provider-aws-s3"),
		compositionOf("storage", "s3.aws.example.io/v1beta1 Bucket", "cache.example.net/v1 Redis")}
	f := fakecluster.NewWithLists(awsLists, objs...)
	forbid(f, "compositions")
	r := examine(t, f)
	if len(r.Unread) != 1 || !strings.Contains(r.Unread[0], "Compositions") || len(r.Findings) > 0 {
		t.Errorf("compositions forbidden: unread %v, findings %+v", r.Unread, r.Findings)
	}
	f = fakecluster.NewWithLists(awsLists, objs...)
	forbid(f, "customresourcedefinitions")
	r = examine(t, f)
	fs := ofRule(r, findings.RuleInactiveComposedKind)
	if len(fs) != 1 || fs[0].Object != "managedresourcedefinition/buckets.s3.aws.example.io" {
		t.Errorf("CRDs forbidden: %+v", r.Findings)
	}
}
