package legacy

import (
	"fmt"
	"strings"
)

// splitImage splits an image reference into its name (registry and
// repository) and its tag, dropping any digest. Docker's grammar is used: a
// tag follows the last ':' after the last '/'.
func splitImage(ref string) (name, tag string) {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// imageTag is the tag of an image reference, "" when it has none.
func imageTag(ref string) string {
	_, tag := splitImage(ref)
	return tag
}

// imageBaseName is the last path element of the image's repository, e.g.
// "provider-gcp" for "crossplane/provider-gcp:v0.1.0".
func imageBaseName(ref string) string {
	name, _ := splitImage(ref)
	return name[strings.LastIndexByte(name, '/')+1:]
}

// hasRegistry reports whether an image reference names its registry. As in
// Docker, the first path element is a registry when it holds a '.' or a ':'
// or is "localhost"; "crossplane/provider-gcp" and "redis" have none.
func hasRegistry(ref string) bool {
	i := strings.IndexByte(ref, '/')
	if i < 0 {
		return false
	}
	first := ref[:i]
	return strings.ContainsAny(first, ".:") || first == "localhost"
}

// withSource prefixes an image that names no registry with the source
// registry, as the package manager did with PackageInstall spec.source; an
// image that already names a registry is left alone.
func withSource(ref, source string) string {
	if source == "" || ref == "" || hasRegistry(ref) {
		return ref
	}
	return source + "/" + ref
}

// cleanSource checks a source registry ("registry.example.com" or
// "registry.example.com/mirror") and drops trailing slashes.
func cleanSource(source string) (string, error) {
	s := strings.TrimRight(source, "/")
	switch {
	case source == "":
		return "", nil
	case s == "":
		return "", fmt.Errorf("Options.Source %q: names no registry", source)
	case strings.Contains(s, "://"):
		return "", fmt.Errorf("Options.Source %q: want a registry host such as registry.example.com, not a URL", source)
	case strings.ContainsAny(s, " \t\r\n@"):
		return "", fmt.Errorf("Options.Source %q: not a registry host", source)
	}
	return s, nil
}
