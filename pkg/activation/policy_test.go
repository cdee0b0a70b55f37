package activation

import (
	"slices"
	"testing"
)

func TestSmallest(t *testing.T) {
	all := []string{
		"buckets.s3.aws.example.io", "objects.s3.aws.example.io",
		"instances.ec2.aws.example.io", "vpcs.ec2.aws.example.io", "subnets.ec2.aws.example.io",
		"nopresources.nop.example.org",
		"databases.sql.gcp.example.io",
	}
	for _, tc := range []struct {
		name   string
		needed []string
		want   []string
	}{
		{"one name", []string{"vpcs.ec2.aws.example.io"}, []string{"vpcs.ec2.aws.example.io"}},
		{"two of a group of three: names", []string{"vpcs.ec2.aws.example.io", "subnets.ec2.aws.example.io"},
			[]string{"subnets.ec2.aws.example.io", "vpcs.ec2.aws.example.io"}},
		{"a whole group: its pattern", []string{"buckets.s3.aws.example.io", "objects.s3.aws.example.io", "vpcs.ec2.aws.example.io"},
			[]string{"*.s3.aws.example.io", "vpcs.ec2.aws.example.io"}},
		{"two whole groups: the broadest clean pattern", []string{"buckets.s3.aws.example.io", "objects.s3.aws.example.io",
			"instances.ec2.aws.example.io", "vpcs.ec2.aws.example.io", "subnets.ec2.aws.example.io"},
			[]string{"*.aws.example.io"}},
		{"a lone kind of its group: its name", []string{"nopresources.nop.example.org"}, []string{"nopresources.nop.example.org"}},
		{"nothing", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Smallest(tc.needed, all)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Smallest = %q, want %q", got, tc.want)
			}
			// Exactly the needed names, as Crossplane matches them.
			for _, n := range all {
				hit := slices.ContainsFunc(got, func(p string) bool { return Matches(p, n) })
				if hit != slices.Contains(tc.needed, n) {
					t.Errorf("%s matched %v, needed %v", n, hit, !hit)
				}
			}
		})
	}
}

func TestMatchesAsCrossplane(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "buckets.s3.aws.example.io", true},
		{"*.aws.example.io", "buckets.s3.aws.example.io", true}, // * crosses dots
		{"*.s3.aws.example.io", "buckets.s3.aws.example.io", true},
		{"buckets.s3.aws.example.io", "buckets.s3.aws.example.io", true},
		{"bucket.s3.aws.example.io", "buckets.s3.aws.example.io", false},
		{"*.aws.example.io", "aws.example.io", false},
	} {
		if got := Matches(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Matches(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
}
