package imageconfig

import (
	"errors"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	configs := []Config{
		{Name: "everything", Prefixes: []string{"xpkg.crossplane.io/"}, Rewrite: true, RewritePrefix: "mirror.corp/all/"},
		{Name: "contrib", Prefixes: []string{"xpkg.crossplane.io/crossplane-contrib/", "xpkg.crossplane.io/crossplane-contrib/provider-"}, Rewrite: true, RewritePrefix: "mirror.corp/contrib/"},
		{Name: "mirror-creds", Prefixes: []string{"mirror.corp/"}, PullSecret: "mirror-pull"},
		{Name: "contrib-creds", Prefixes: []string{"mirror.corp/contrib/"}, PullSecret: "contrib-pull"},
		{Name: "verify", Prefixes: []string{"mirror.corp/contrib/provider-nop"}, Verify: true},
		{Name: "empty-prefix", Prefixes: []string{""}, PullSecret: "never"},
	}
	for _, tc := range []struct {
		ref, resolved, secret, applied, unverified string
	}{
		// The longest matching prefix across configs picks the config, and
		// the longest of its prefixes is what is replaced.
		{"xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0", "mirror.corp/contrib/nop:v0.4.0", "contrib-pull",
			"contrib/RewriteImage,contrib-creds/SetImagePullSecret", ""},
		{"xpkg.crossplane.io/crossplane-contrib/function-x:v1", "mirror.corp/contrib/function-x:v1", "contrib-pull",
			"contrib/RewriteImage,contrib-creds/SetImagePullSecret", ""},
		{"xpkg.crossplane.io/upbound/provider-aws:v1", "mirror.corp/all/upbound/provider-aws:v1", "mirror-pull",
			"everything/RewriteImage,mirror-creds/SetImagePullSecret", ""},
		// The pull secret matches the rewritten reference, not the original.
		{"mirror.corp/other/p:v1", "mirror.corp/other/p:v1", "mirror-pull", "mirror-creds/SetImagePullSecret", ""},
		{"index.docker.io/x/y:v1", "index.docker.io/x/y:v1", "", "", ""},
		{"mirror.corp/contrib/provider-nop:v1", "mirror.corp/contrib/provider-nop:v1", "contrib-pull", "contrib-creds/SetImagePullSecret", "verify"},
	} {
		r, err := Resolve(configs, tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		var applied []string
		for _, a := range r.Applied {
			applied = append(applied, a.Name+"/"+a.Reason)
		}
		if r.Resolved != tc.resolved || r.PullSecret != tc.secret || strings.Join(applied, ",") != tc.applied || r.Unverified != tc.unverified {
			t.Errorf("%s: %s secret %q applied %v unverified %q; want %s %q %s %q", tc.ref, r.Resolved, r.PullSecret, applied, r.Unverified, tc.resolved, tc.secret, tc.applied, tc.unverified)
		}
	}
	// A tie goes to the first listed.
	r, _ := Resolve([]Config{
		{Name: "a", Prefixes: []string{"r.io/"}, PullSecret: "a"},
		{Name: "b", Prefixes: []string{"r.io/"}, PullSecret: "b"},
	}, "r.io/x:v1")
	if r.PullSecret != "a" || r.Rewritten() != "" || strings.Join(r.Names(), ",") != "a" {
		t.Errorf("tie: %+v", r)
	}
	var ie *Error
	if _, err := Resolve([]Config{{Name: "bad", Prefixes: []string{"r.io/"}, Rewrite: true}}, "r.io/x:v1"); !errors.As(err, &ie) || ie.Config != "bad" {
		t.Errorf("a rewrite without a prefix: %v", err)
	}
}
