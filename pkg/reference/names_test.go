package reference

import (
	"strings"
	"testing"
)

func TestReferenceParts(t *testing.T) {
	d := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct{ ref, tag, digest, pin string }{
		{"r.io/org/p:v1.0.0", "v1.0.0", "", "r.io/org/p:v1.0.0@" + d},
		{"r.io/org/p:v1.0.0@" + d, "v1.0.0", d, "r.io/org/p:v1.0.0@" + d},
		{"r.io/org/p@" + d, "", d, "r.io/org/p@" + d},
		{"127.0.0.1:5000/org/p", "", "", "127.0.0.1:5000/org/p@" + d},
		{"127.0.0.1:5000/org/p:v2", "v2", "", "127.0.0.1:5000/org/p:v2@" + d},
	} {
		if got := Tag(tc.ref); got != tc.tag {
			t.Errorf("Tag(%s) = %q, want %q", tc.ref, got, tc.tag)
		}
		if got := Digest(tc.ref); got != tc.digest {
			t.Errorf("Digest(%s) = %q, want %q", tc.ref, got, tc.digest)
		}
		if got := Pin(tc.ref, d); got != tc.pin {
			t.Errorf("Pin(%s) = %q, want %q", tc.ref, got, tc.pin)
		}
	}
	if Repository("r.io/org/p:v1.0.0@"+d) != "r.io/org/p" || Version("r.io/org/p:v1.0.0@"+d) != d {
		t.Errorf("a pinned reference: repository %q, version %q", Repository("r.io/org/p:v1.0.0@"+d), Version("r.io/org/p:v1.0.0@"+d))
	}
	for rev, want := range map[string]string{"p-0123456789ab": "0123456789ab", "p-0123456789AB": "", "p-old01": "", "p": ""} {
		if got := RevisionID(rev); got != want {
			t.Errorf("RevisionID(%s) = %q, want %q", rev, got, want)
		}
	}
}

// The revisions the real package managers made for provider-nop v0.2.1 (the
// e2e sample, digest sha256:9b9ba4e1e929…): v2.3.4 names it after the
// digest, v2.4.2 after sha256("<hex>|<generation>"): a7f7a137ed57 at
// generation 1, seen on a v2.4.2 cluster.
func TestRevisionMadeFrom(t *testing.T) {
	const (
		nop   = "sha256:9b9ba4e1e929173331ec85fd3151410e594d8903620e0297d910234e1d54c20b"
		other = "sha256:66fa8fa653e9ea674be5a1c61d83e51bcd794c8b897286a7e9487ea4e0211f17"
	)
	gen3 := "nop-" + RevisionIDAt(strings.TrimPrefix(nop, "sha256:"), 3)
	for _, tc := range []struct {
		rev, digest string
		generation  int64
		want        bool
	}{
		{"nop-9b9ba4e1e929", nop, 1, true},    // v2.3
		{"nop-9b9ba4e1e929", nop, 7, true},    // v2.3: any generation
		{"nop-a7f7a137ed57", nop, 1, true},    // v2.4, generation 1
		{"nop-a7f7a137ed57", nop, 5, true},    // made at 1, the package is at 5 now
		{"nop-a7f7a137ed57", nop, 0, false},   // no generation read
		{"nop-a7f7a137ed57", other, 1, false}, // another image
		{"nop-9b9ba4e1e929", other, 1, false},
		{gen3, nop, 3, true},
		{gen3, nop, 2, false}, // made at a generation the package has not reached
		{"nop-a7f7a137ed57", "9b9ba4e1e929173331ec85fd3151410e594d8903620e0297d910234e1d54c20b", 1, false}, // no algorithm
		{"nop-a7f7a137ed5", nop, 1, false}, // not a revision identifier
		{"nop", nop, 1, false},
	} {
		if got := RevisionMadeFrom(tc.rev, tc.digest, tc.generation); got != tc.want {
			t.Errorf("RevisionMadeFrom(%s, %.19s…, %d) = %v, want %v", tc.rev, tc.digest, tc.generation, got, tc.want)
		}
	}
	if got := RevisionIDAt(strings.TrimPrefix(nop, "sha256:"), 1); got != "a7f7a137ed57" {
		t.Errorf("RevisionIDAt(nop, 1) = %s, want a7f7a137ed57 (Crossplane v2.4.2's name)", got)
	}
}
