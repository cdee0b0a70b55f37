package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

const famName = "provider-family-fam"

// famCRD is a cluster-scoped CRD in the shape of upjet's: one served and
// stored version with a spec and a status.
func famCRD(group, kind string) string {
	plural := strings.ToLower(kind) + "s"
	return fmt.Sprintf(`---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
spec:
  group: %[2]s
  names:
    kind: %[3]s
    listKind: %[3]sList
    plural: %[1]s
    singular: %[4]s
    categories: [crossplane, aws]
  scope: Cluster
  versions:
  - name: v1beta1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              credentials:
                type: object
                properties:
                  source: {type: string}
          status:
            type: object
            properties:
              users: {type: integer}
`, plural, group, kind, strings.ToLower(kind))
}

// pushFamilyPackage pushes a provider of the family as repo:tag: its
// meta object labelled with the family, depending on the family provider
// at ">= 0.0.0" unless it is the family provider, and its CRDs.
func pushFamilyPackage(t *testing.T, reg *testenv.Registry, repo, tag, familyRepo string, crds ...string) {
	t.Helper()
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: " + repo[strings.LastIndex(repo, "/")+1:] +
		"\n  labels:\n    pkg.crossplane.io/provider-family: " + famName + "\n  annotations:\n    version: " + tag + "\n"
	if familyRepo != "" {
		meta += "spec:\n  dependsOn:\n  - provider: " + familyRepo + "\n    version: \">= 0.0.0\"\n"
	}
	img, err := fixture.Image([]byte(meta + strings.Join(crds, "")))
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Push(reg.Host+"/"+repo+":"+tag, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
}

// TestProviderFamilies: a family provider (the ProviderConfig CRDs) and
// three members at two versions, members labelled and depending on the
// family at ">= 0.0.0", on the real package manager: FAMILY shown, the
// family at two versions found by outdated and doctor, and a member from
// another org flagged with the ClusterRole and the CRDs it would lack.
func TestProviderFamilies(t *testing.T) {
	env, reg, c, x := start(t)
	famRepo := reg.Host + "/e2e/fam/" + famName
	for _, tag := range []string{"v1.0.0", "v1.1.0"} {
		pushFamilyPackage(t, reg, "e2e/fam/"+famName, tag, "", famCRD("fam.example.org", "ProviderConfig"), famCRD("fam.example.org", "ProviderConfigUsage"))
		for _, m := range []string{"a", "b", "c"} {
			pushFamilyPackage(t, reg, "e2e/fam/provider-fam-"+m, tag, famRepo, famCRD(m+".fam.example.org", "Bucket"))
		}
	}
	// v1.2.0 of member b cannot be installed: its CRD has two storage
	// versions, which the API server refuses.
	pushFamilyPackage(t, reg, "e2e/fam/"+famName, "v1.2.0", "", famCRD("fam.example.org", "ProviderConfig"), famCRD("fam.example.org", "ProviderConfigUsage"))
	for _, m := range []string{"a", "b", "c"} {
		crd := famCRD(m+".fam.example.org", "Bucket")
		if m == "b" {
			crd += "  - name: v1beta2\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n"
		}
		pushFamilyPackage(t, reg, "e2e/fam/provider-fam-"+m, "v1.2.0", famRepo, crd)
	}
	pushFamilyPackage(t, reg, "fam-other/provider-fam-d", "v1.0.0", famRepo, famCRD("d.fam.example.org", "Queue"))
	const family = "e2e-fam-" + famName // the resolver's name for the family provider
	members := []string{"e2e-fam-provider-fam-a", "e2e-fam-provider-fam-b", "e2e-fam-provider-fam-c"}
	t.Cleanup(func() {
		y := clitest.New(t).WithEnv(env)
		y.Run("uninstall", "provider/"+members[0], "provider/"+members[1], "provider/"+members[2], "provider/fam-other-provider-fam-d", "--force", "--yes", "--wait=2m")
		y.Run("uninstall", "provider/"+family, "--force", "--yes", "--wait=2m")
	})
	x.Run("install", famRepo+":v1.0.0", "--wait=5m").Succeeds(t)
	for _, m := range []string{"a", "b", "c"} {
		x.Run("install", reg.Host+"/e2e/fam/provider-fam-"+m+":v1.1.0", "--wait=5m").Succeeds(t)
	}

	r := x.Run("outdated", "providers", "-o", "wide").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg outdated providers -o wide\n%s", r.Stdout)
	for _, n := range append([]string{family}, members...) {
		if f := strings.Fields(lineWith(r.Stdout, n+" ")); len(f) < 7 || f[6] != famName {
			t.Errorf("outdated -o wide: %s's FAMILY is not %s: %v", n, famName, f)
		}
	}
	contains(t, "outdated's findings", r.Stdout, "WARNING  family "+famName+" runs 2 versions (v1.0.0: provider/"+family+"; v1.1.0: provider/"+members[0], "[family-skew]")
	r = x.Run("get", "providers", "-o", "wide").Succeeds(t)
	if !strings.HasSuffix(strings.TrimSpace(lineWith(r.Stdout, members[1]+" ")), famName) {
		t.Errorf("get -o wide: no FAMILY for %s:\n%s", members[1], r.Stdout)
	}
	r = x.Run("doctor").Succeeds(t)
	contains(t, "doctor", r.Stdout, "family "+famName+" runs 2 versions", "[family-skew]")

	// v1.2.0 has a member that cannot install, so the default is the
	// newest every repository has: each has v1.2.0, and no constraint
	// keeps it out; VERSION v1.1.0 moves the family provider alone.
	r = x.Run("upgrade", "--family", famName, "v1.1.0", "--dry-run").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg upgrade --family %s v1.1.0 --dry-run\n%s", famName, r.Stdout)
	contains(t, "upgrade --family --dry-run", r.Stdout, "Plan: upgrade --family "+famName+" to v1.1.0: 1 package: provider/"+family)
	r = x.Run("upgrade", "--family", famName, "v1.1.0", "--wait=5m").Succeeds(t)
	contains(t, "upgrade --family", r.Stdout, "provider/"+family+" upgraded from v1.0.0 to v1.1.0")
	if r = x.Run("outdated", "-o", "json").Succeeds(t); strings.Contains(r.Stdout, "family-skew") {
		t.Errorf("a family at one version still skewed:\n%s", r.Stdout)
	}
	r = x.Run("upgrade", "--family", famName, "--dry-run").Succeeds(t)
	contains(t, "upgrade --family's default", r.Stdout, "Plan: upgrade --family "+famName+" to v1.2.0: 4 packages, in this order: provider/"+family+", provider/"+members[0]+", provider/"+members[1]+", provider/"+members[2])
	r = x.Run("upgrade", "--family", famName, "v1.2.0", "--atomic", "--wait=90s")
	t.Logf("transcript:\n$ kubectl xpkg upgrade --family %s v1.2.0 --atomic --wait=90s\n%s%s", famName, r.Stderr, r.Stdout)
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "family "+famName+" rolled back: provider/"+family+", provider/"+members[0]+" run their previous versions again") ||
		!strings.Contains(r.Stdout, "provider/"+members[0]+" rolled back to v1.1.0\nprovider/"+family+" rolled back to v1.1.0\n") {
		t.Errorf("upgrade --family --atomic with a member that cannot install: exit %d\n%s", r.ExitCode, r.Stderr)
	}
	// The records upgrade --family writes before each step are gone once
	// it is done or rolled back.
	for _, n := range append([]string{family}, members...) {
		if v := c.get("providers", n).GetAnnotations()["kubectl-xpkg.github.io/operation"]; v != "" {
			t.Errorf("provider/%s keeps the record of upgrade --family: %s", n, v)
		}
	}
	r = x.Run("outdated", "providers", "-o", "json").Succeeds(t)
	for name, it := range outdatedRows(t, r.Stdout) {
		if it.Current != "v1.1.0" {
			t.Errorf("after the family's rollback %s runs %s, not v1.1.0", name, it.Current)
		}
	}

	r = x.Run("upgrade", "--all", "--dry-run").Succeeds(t)
	contains(t, "upgrade --all --dry-run", r.Stdout, "Family "+famName+" moves as one, to v1.2.0", "Plan: upgrade --all: 4 packages, in this order: provider/"+family+", ")

	x.Run("install", reg.Host+"/fam-other/provider-fam-d:v1.0.0", "--wait=5m").Succeeds(t)
	r = x.Run("outdated", "-o", "json").Succeeds(t)
	var doc struct {
		Findings []struct{ Rule, Object, Message string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("outdated -o json: %v\n%s", err, r.Stdout)
	}
	var other string
	for _, f := range doc.Findings {
		if f.Object == "provider/fam-other-provider-fam-d" {
			other = f.Message
		}
	}
	for _, want := range []string{
		"(" + reg.Host + "/fam-other) is not in the registry and org of its family provider provider/" + family + " (" + reg.Host + "/e2e)",
		"ClusterRole crossplane:provider:fam-other-provider-fam-d-", "does not grant providerconfigs.fam.example.org, providerconfigusages.fam.example.org",
	} {
		if !strings.Contains(other, want) {
			t.Errorf("the member from another org: %q lacks %q", other, want)
		}
	}
}

// lineWith is the first line of s that contains sub.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
