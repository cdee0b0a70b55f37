// Package reference is what the plugin knows of package references and the
// names made from them: the repository, tag, digest and version a
// reference names, pinning one by digest, the name Crossplane gives a
// package it installs from a repository, and the revision names of each
// Crossplane release. It reads no cluster and imports nothing of this
// module.
package reference

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// DNSLabel turns a repository path into the object name Crossplane gives a
// package it installs itself (crossplane-contrib/provider-nop ->
// crossplane-contrib-provider-nop): letters and digits kept, separators
// turned into dashes, cut at 63 characters.
func DNSLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') {
			b.WriteByte(c)
		}
		if (c == '.' || c == '/' || c == ':' || c == '-') && i != 0 && i != 62 && i != len(s)-1 {
			b.WriteByte('-')
		}
		if i == 62 {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}

// DefaultName is the name Crossplane would give the package ref points to.
func DefaultName(ref name.Reference) string {
	return DNSLabel(ref.Context().RepositoryStr())
}

// Version is the tag or digest of a package reference.
func Version(ref string) string {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return ""
	}
	return r.Identifier()
}

// Repository is the reference without tag or digest.
func Repository(ref string) string {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return ref
	}
	return r.Context().Name()
}

// Tag is the tag a package reference names, also when a digest pins it
// (repository:tag@sha256:…); "" when it names none.
func Tag(ref string) string {
	base, _, _ := strings.Cut(ref, "@")
	i, j := strings.LastIndexByte(base, ':'), strings.LastIndexByte(base, '/')
	if i <= j {
		return ""
	}
	return base[i+1:]
}

// Digest is the digest that pins a package reference, or "".
func Digest(ref string) string {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return ""
	}
	if d, ok := r.(name.Digest); ok {
		return d.DigestStr()
	}
	return ""
}

// Pin is the reference repository:tag@digest: the tag for people, the
// digest for the package manager, which pulls by it.
func Pin(ref, digest string) string {
	base, _, _ := strings.Cut(ref, "@")
	if Tag(base) == "" {
		return Repository(base) + "@" + digest
	}
	return base + "@" + digest
}

// RevisionID is the identifier the package manager puts at the end of a
// revision's name (12 hex digits), or "". Up to Crossplane v2.3 it is the
// start of the image digest; from v2.4 it is the start of a hash of the
// digest and the package's generation, which no field records: only
// RevisionMadeFrom tells whether it comes from a given digest.
func RevisionID(rev string) string {
	i := strings.LastIndexByte(rev, '-')
	if i < 0 || len(rev)-i-1 != 12 {
		return ""
	}
	for _, c := range rev[i+1:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return rev[i+1:]
}

// maxGenerations bounds the generations RevisionMadeFrom tries: a package
// edited more often than this is checked against its newest ones.
const maxGenerations = 1 << 14

// RevisionMadeFrom reports whether the package manager names a revision
// rev when it installs the image of digest (algorithm:hex) for a package
// whose metadata.generation is, or was, at most generation, under the
// naming of either Crossplane release line:
//   - up to v2.3: <package>-<first 12 hex digits of the digest>;
//   - v2.4 and later: <package>-<first 12 hex digits of
//     sha256("<digest hex>|<generation>")>, the package's generation when
//     the revision was made (crossplane#7473).
func RevisionMadeFrom(rev, digest string, generation int64) bool {
	id := RevisionID(rev)
	_, dh, ok := strings.Cut(digest, ":")
	if id == "" || !ok || len(dh) < len(id) {
		return false
	}
	if strings.HasPrefix(dh, id) {
		return true
	}
	for g := generation; g >= 1 && g > generation-maxGenerations; g-- {
		if RevisionIDAt(dh, g) == id {
			return true
		}
	}
	return false
}

// RevisionIDAt is the revision identifier Crossplane v2.4 and later derive
// from an image digest's hex digits and the package's generation.
func RevisionIDAt(digestHex string, generation int64) string {
	sum := sha256.Sum256([]byte(digestHex + "|" + strconv.FormatInt(generation, 10)))
	return hex.EncodeToString(sum[:6])
}
