package diff

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// realPair compares two releases of a real package (hack/testdata/packages,
// copied from the public repositories SOURCES.txt names) through Parse, as
// the diff verb does.
func realPair(t testing.TB, name, oldTag, newTag string) *Report {
	t.Helper()
	old, new, err := Parse(realDocs(t, name, oldTag), realDocs(t, name, newTag), xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return Compare(old, new)
}

// realDocs is the documents of a real package's release.
func realDocs(t testing.TB, name, tag string) [][]byte {
	t.Helper()
	b, err := fixture.Stream(filepath.Join("..", "..", "hack", "testdata", "packages", name, tag))
	if err != nil {
		t.Fatal(err)
	}
	d, err := xpkg.Split(strings.NewReader(string(b)), xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func objectsWith(r *Report, status string) []string {
	var out []string
	for _, o := range r.Objects {
		if o.Status == status {
			out = append(out, o.Label())
		}
	}
	return out
}

// hasChange checks that the report holds, for the object, a change whose
// line ends with want.
func hasChange(t *testing.T, r *Report, object, want string) {
	t.Helper()
	for _, l := range flat(r) {
		if strings.HasPrefix(l, object+": ") && strings.HasSuffix(l, want) {
			return
		}
	}
	t.Errorf("no change %q on %s in:\n%s", want, object, strings.Join(flat(r), "\n"))
}

func TestRealPairs(t *testing.T) {
	t.Run("provider-nop", func(t *testing.T) {
		r := realPair(t, "provider-nop", "v0.2.1", "v0.4.0")
		const crd = "CustomResourceDefinition nopresources.nop.crossplane.io"
		if got := objectsWith(r, Added); !slices.Equal(got, []string{"ValidatingWebhookConfiguration validating-webhook-configuration"}) {
			t.Errorf("added: %v", got)
		}
		hasChange(t, r, crd, "v1alpha1 spec.providerRef: field removed [breaking, field-removed]")
		hasChange(t, r, crd, "v1alpha1 spec.managementPolicies: field added (array of string) [compatible, field-added]")
		hasChange(t, r, crd, "v1alpha1 status.conditions: x-kubernetes-list-type changed from (none) to map [compatible, schema-changed]")
		hasChange(t, r, crd, "metadata.annotations: controller-gen.kubebuilder.io/version: v0.11.1 → v0.14.0 [compatible, metadata-changed]")
		if r.Summary.Breaking != 1 {
			t.Errorf("breaking: %d", r.Summary.Breaking)
		}
	})
	t.Run("provider-kubernetes", func(t *testing.T) {
		r := realPair(t, "provider-kubernetes", "v0.18.0", "v1.0.0")
		added := objectsWith(r, Added)
		if len(added) != 5 || !slices.Contains(added, "CustomResourceDefinition objects.kubernetes.m.crossplane.io") {
			t.Errorf("added: %v", added)
		}
		hasChange(t, r, "CustomResourceDefinition objects.kubernetes.crossplane.io", "v1alpha2 spec.publishConnectionDetailsTo: field removed [breaking, field-removed]")
		if len(objectsWith(r, Removed)) != 0 {
			t.Errorf("removed: %v", objectsWith(r, Removed))
		}
	})
	t.Run("provider-helm", func(t *testing.T) {
		r := realPair(t, "provider-helm", "v1.3.0", "v1.4.0")
		hasChange(t, r, "CustomResourceDefinition releases.helm.crossplane.io", "v1beta1 spec.forProvider.ssaForceConflicts: field added (boolean) [compatible, field-added]")
		hasChange(t, r, "CustomResourceDefinition releases.helm.crossplane.io", "v1beta1 status.lastHandledReconcileAt: field added (string) [compatible, field-added]")
		hasChange(t, r, "CustomResourceDefinition providerconfigs.helm.crossplane.io", "v1beta1 spec.identity.type: enum values added: NebiusServiceAccountCredentials [compatible, enum-widened]")
		if r.Breaking() || r.Summary.Changed != 5 || r.Summary.Unchanged != 2 {
			t.Errorf("summary: %+v", r.Summary)
		}
	})
	t.Run("function-patch-and-transform", func(t *testing.T) {
		r := realPair(t, "function-patch-and-transform", "v0.9.0", "v0.10.8")
		hasChange(t, r, "CustomResourceDefinition resources.pt.fn.crossplane.io", "v1beta1 writeConnectionSecretToRef: field added (object) [compatible, field-added]")
		if r.Breaking() {
			t.Errorf("breaking: %v", flat(r))
		}
	})
	t.Run("configuration-aws-network", func(t *testing.T) {
		r := realPair(t, "configuration-aws-network", "v0.21.0", "v0.23.0")
		hasChange(t, r, "package", `provider constraint "v1.19.0" → "v1" [compatible, dependency-constraint-changed]`)
		hasChange(t, r, "package", `function constraint "v0.4.0" → "v0.4.2", refusing v0.4.0 [breaking, dependency-constraint-narrowed]`)
		if r.Summary.Unchanged != 2 || len(r.Objects) != 0 {
			t.Errorf("the XRD and Composition did not change, got %+v", r.Summary)
		}
	})
	t.Run("provider-aws", func(t *testing.T) {
		r := realPair(t, "provider-aws", "v0.50.0", "v0.58.0")
		if r.Summary.Changed < 150 || r.Summary.Added != 5 || r.Summary.Removed != 0 {
			t.Errorf("summary: %+v", r.Summary)
		}
		if got := objectsWith(r, Added); !slices.Contains(got, "CustomResourceDefinition webacls.wafv2.aws.crossplane.io") || !slices.Contains(got, "CustomResourceDefinition rules.elbv2.aws.crossplane.io") {
			t.Errorf("added: %v", got)
		}
		// The three breaking changes between these releases.
		hasChange(t, r, "CustomResourceDefinition dbinstances.docdb.aws.crossplane.io", "v1alpha1 status.atProvider.caCertificateIdentifier: field removed [breaking, field-removed]")
		hasChange(t, r, "CustomResourceDefinition identityproviders.cognitoidentityprovider.aws.crossplane.io", "v1alpha1 spec.forProvider.providerDetailsSecretRef: became required [breaking, field-became-required]")
		hasChange(t, r, "CustomResourceDefinition jobruns.emrcontainers.aws.crossplane.io", "v1alpha1 spec.forProvider.virtualClusterId: became required [breaking, field-became-required]")
		if r.Summary.Breaking != 3 {
			t.Errorf("breaking: %d", r.Summary.Breaking)
		}
		const buckets = "CustomResourceDefinition buckets.s3.aws.crossplane.io"
		hasChange(t, r, buckets, "v1beta1 spec.forProvider.objectLockRule: field added (object) [compatible, field-added]")
		hasChange(t, r, buckets, "v1beta1 spec.forProvider.lifecycleConfiguration.rules[*].transitions[*].storageClass: enum values added: GLACIER_IR [compatible, enum-widened]")
	})
}

// BenchmarkProviderAWS parses and compares provider-aws v0.50.0 and
// v0.58.0 (≈ 7 MB of YAML each), as the diff verb does after reading.
func BenchmarkProviderAWS(b *testing.B) {
	old, new := realDocs(b, "provider-aws", "v0.50.0"), realDocs(b, "provider-aws", "v0.58.0")
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Parse(old, new, xpkg.DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
	})
	o, n, err := Parse(old, new, xpkg.DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			Compare(o, n)
		}
	})
}
