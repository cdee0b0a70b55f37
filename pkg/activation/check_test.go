package activation

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

func TestNear(t *testing.T) {
	var defs []Definition
	for _, n := range []string{"buckets.s3.aws.example.io", "bucketpolicies.s3.aws.example.io", "addresses.ec2.aws.example.io", "vpcs.ec2.aws.example.io"} {
		defs = append(defs, Definition{Name: n})
	}
	for entry, want := range map[string][]string{
		"bucket.s3.aws.example.io":       {"buckets.s3.aws.example.io"},
		"bucketpolicy.s3.aws.example.io": {"bucketpolicies.s3.aws.example.io"},
		"address.ec2.aws.example.io":     {"addresses.ec2.aws.example.io"},
		"vpcs.ec2.aws.exmaple.io":        {"vpcs.ec2.aws.example.io"},
		"*.s3.aws.exmple.io":             {"*.s3.aws.example.io"},
		"*.aws.exampel.io":               {"*.aws.example.io"},
		"topics.sns.aws.example.io":      nil,
		"buckets.s3.gcp.example.io":      nil,
		"bucket.s3.aws.example.io.extra": nil,
		"zz":                             nil,
	} {
		if got := near(entry, defs); !slices.Equal(got, want) {
			t.Errorf("near(%q) = %q, want %q", entry, got, want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		n    int
		want bool
	}{
		{"kitten", "sitting", 2, false}, {"kitten", "sitting", 3, true}, {"", "ab", 2, true}, {"abc", "abc", 0, true},
		{"example", "exmaple", 2, true}, {"abcd", "dcba", 2, false},
	} {
		if got := within(tc.a, tc.b, tc.n); got != tc.want {
			t.Errorf("within(%q, %q, %d) = %v", tc.a, tc.b, tc.n, got)
		}
	}
}

// TestUnmadeAndUnused: Kubernetes' own kinds and the kinds CRDs serve
// need nothing; an inactive MRD's kind and an undefined one are unmade;
// the active MRDs nothing composes and without objects are unused.
func TestUnmadeAndUnused(t *testing.T) {
	in := Input{
		Definitions: []Definition{
			{Name: "buckets.s3.aws.example.io", Kind: "Bucket.s3.aws.example.io", State: "Inactive", Provider: "provider/s3"},
			{Name: "vpcs.ec2.aws.example.io", Kind: "VPC.ec2.aws.example.io", State: "Active"},
			{Name: "subnets.ec2.aws.example.io", Kind: "Subnet.ec2.aws.example.io", State: "Active", Objects: 3},
			{Name: "queues.sqs.aws.example.io", Kind: "Queue.sqs.aws.example.io", State: "Active"},
		},
		Served: map[string]bool{"XNetwork.example.org": true},
		Compositions: []composition.Composition{
			{Name: "b", Composes: []schema.GroupKind{{Group: "s3.aws.example.io", Kind: "Bucket"}, {Group: "apps", Kind: "Deployment"}, {Kind: "ConfigMap"}}},
			{Name: "a", Composes: []schema.GroupKind{{Group: "s3.aws.example.io", Kind: "Bucket"}, {Group: "ec2.aws.example.io", Kind: "VPC"},
				{Group: "example.org", Kind: "XNetwork"}, {Group: "networking.k8s.io", Kind: "NetworkPolicy"}, {Group: "cache.example.net", Kind: "Redis"}}},
		},
		Policies: []installed.MRAP{{Name: "p", Activate: []string{"*.ec2.aws.example.io", "bucket.s3.aws.example.io"}}},
	}
	got := UnmadeKinds(in)
	want := []Unmade{
		{Kind: "Bucket.s3.aws.example.io", MRD: "buckets.s3.aws.example.io", Provider: "provider/s3", Compositions: []string{"a", "b"}},
		{Kind: "Redis.cache.example.net", Compositions: []string{"a"}},
	}
	if !slices.EqualFunc(got, want, func(a, b Unmade) bool {
		return a.Kind == b.Kind && a.MRD == b.MRD && a.Provider == b.Provider && slices.Equal(a.Compositions, b.Compositions)
	}) {
		t.Errorf("unmade %+v, want %+v", got, want)
	}
	if u := Unused(in); len(u) != 1 || u[0].Name != "queues.sqs.aws.example.io" {
		t.Errorf("unused %+v", u)
	}
	if u := UnmatchedEntries(in); len(u) != 1 || u[0].Entry != "bucket.s3.aws.example.io" || !slices.Equal(u[0].Near, []string{"buckets.s3.aws.example.io"}) {
		t.Errorf("unmatched %+v", u)
	}
}
