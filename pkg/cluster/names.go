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
