package cluster

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
		if got := RefTag(tc.ref); got != tc.tag {
			t.Errorf("RefTag(%s) = %q, want %q", tc.ref, got, tc.tag)
		}
		if got := RefDigest(tc.ref); got != tc.digest {
			t.Errorf("RefDigest(%s) = %q, want %q", tc.ref, got, tc.digest)
		}
		if got := Pin(tc.ref, d); got != tc.pin {
			t.Errorf("Pin(%s) = %q, want %q", tc.ref, got, tc.pin)
		}
	}
	if RefRepository("r.io/org/p:v1.0.0@"+d) != "r.io/org/p" || RefVersion("r.io/org/p:v1.0.0@"+d) != d {
		t.Errorf("a pinned reference: repository %q, version %q", RefRepository("r.io/org/p:v1.0.0@"+d), RefVersion("r.io/org/p:v1.0.0@"+d))
	}
	for rev, want := range map[string]string{"p-0123456789ab": "0123456789ab", "p-0123456789AB": "", "p-old01": "", "p": ""} {
		if got := RevisionDigest(rev); got != want {
			t.Errorf("RevisionDigest(%s) = %q, want %q", rev, got, want)
		}
	}
}
