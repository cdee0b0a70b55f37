package reference

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzReferenceNames checks the reference helpers on any input: no panic,
// DNSLabel always a valid DNS label (or empty), and the repository and
// version of a reference put back together parse to the same.
func FuzzReferenceNames(f *testing.F) {
	for _, s := range []string{
		"xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0",
		"crossplane-contrib/provider-nop@sha256:66fa8fa653e9ea674be5a1c61d83e51bcd794c8b897286a7e9487ea4e0211f17",
		"127.0.0.1:5000/e2e/x:latest", "a", "", "UPPER/Case:Tag", strings.Repeat("very-long-path/", 10) + "p:v1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		if l := DNSLabel(ref); l != "" && len(validation.IsDNS1123Label(l)) > 0 {
			t.Fatalf("DNSLabel(%q) = %q: %v", ref, l, validation.IsDNS1123Label(l))
		}
		// Pinning keeps the tag and adds the digest, whatever pinned it before.
		if _, err := name.ParseReference(ref, name.WeakValidation); err == nil {
			const d = "sha256:66fa8fa653e9ea674be5a1c61d83e51bcd794c8b897286a7e9487ea4e0211f17"
			pinned := Pin(ref, d)
			if _, err := name.ParseReference(pinned, name.WeakValidation); err == nil &&
				(Digest(pinned) != d || Tag(pinned) != Tag(ref) || Repository(pinned) != Repository(ref)) {
				t.Fatalf("Pin(%q) = %q: digest %q, tag %q (was %q), repository %q (was %q)",
					ref, pinned, Digest(pinned), Tag(pinned), Tag(ref), Repository(pinned), Repository(ref))
			}
		}
		repo, version := Repository(ref), Version(ref)
		if version == "" {
			return
		}
		sep := ":"
		if strings.HasPrefix(version, "sha256:") {
			sep = "@"
		}
		// go-containerregistry caps a repository at 255 characters, counted
		// as written: a 255-character Docker Hub name parses alone, but not
		// again with the library/ it gained. Such a name has no round trip.
		if _, err := name.ParseReference(repo+sep+version, name.WeakValidation); err != nil {
			return
		}
		if again := Repository(repo + sep + version); again != repo {
			t.Fatalf("%q: repository %q, but %q gives %q", ref, repo, repo+sep+version, again)
		}
		if again := Version(repo + sep + version); again != version {
			t.Fatalf("%q: version %q, but %q gives %q", ref, version, repo+sep+version, again)
		}
	})
}
