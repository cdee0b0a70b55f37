package cluster

import (
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

// RefVersion is the tag or digest of a package reference.
func RefVersion(ref string) string {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return ""
	}
	return r.Identifier()
}

// RefRepository is the reference without tag or digest.
func RefRepository(ref string) string {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return ref
	}
	return r.Context().Name()
}

// RefTag is the tag a package reference names, also when a digest pins it
// (repository:tag@sha256:…); "" when it names none.
func RefTag(ref string) string {
	base, _, _ := strings.Cut(ref, "@")
	i, j := strings.LastIndexByte(base, ':'), strings.LastIndexByte(base, '/')
	if i <= j {
		return ""
	}
	return base[i+1:]
}

// RefDigest is the digest that pins a package reference, or "".
func RefDigest(ref string) string {
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
	if RefTag(base) == "" {
		return RefRepository(base) + "@" + digest
	}
	return base + "@" + digest
}

// RevisionDigest is the start of the image digest that the package
// manager puts at the end of a revision's name (12 hex digits), or "".
func RevisionDigest(rev string) string {
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
