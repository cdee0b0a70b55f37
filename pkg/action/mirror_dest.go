package action

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
)

// ImageConfigAPIVersion is the API of Crossplane's ImageConfigs.
const ImageConfigAPIVersion = "pkg.crossplane.io/v1beta1"

// CheckMirrorPrefix accepts a destination prefix: a registry host and,
// optionally, a path, with no tag or digest.
func CheckMirrorPrefix(prefix string) error {
	p := strings.TrimSuffix(prefix, "/")
	host, path, _ := strings.Cut(p, "/")
	var err error
	if path == "" {
		_, err = name.NewRegistry(host, name.StrictValidation)
	} else {
		_, err = name.NewRepository(p, name.StrictValidation)
	}
	if err != nil || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return fmt.Errorf("--to %q: want a registry host and an optional path, such as registry.example.com/crossplane (no tag, no digest)", prefix)
	}
	return nil
}

// mirrorPath is where repo goes under a destination prefix: the
// repository's path without its registry host, so that one rewrite of
// the host's prefix reaches every package under it.
func mirrorPath(prefix, repo string) (string, error) {
	r, err := name.NewRepository(repo, name.WeakValidation)
	if err != nil {
		return "", fmt.Errorf("package %q: %w", repo, err)
	}
	return strings.TrimSuffix(prefix, "/") + "/" + r.RepositoryStr(), nil
}

// assignDestinations sets each package's destination under prefix;
// two repositories of different registries with one path would land on
// one destination, which is refused.
func assignDestinations(pkgs []*MirrorPackage, prefix string) error {
	from := map[string]string{}
	for _, p := range pkgs {
		repo, err := mirrorPath(prefix, p.Package)
		if err != nil {
			return err
		}
		if other, ok := from[repo]; ok && other != p.Package {
			return fmt.Errorf("%s and %s would both be mirrored to %s: mirror them in two runs, to two prefixes", other, p.Package, repo)
		}
		from[repo] = p.Package
		p.Destination = resolve.Ref(repo, p.Version)
	}
	return nil
}

// MirrorConfigs are the ImageConfigs that send Crossplane's package
// manager to the copies, as pkg/imageconfig reads them: one per mirrored
// repository, sorted, and with pullSecret one more that gives the
// copies' registry that Secret (the package manager looks up a pull
// secret for the rewritten reference).
//
// The package manager (crossplane-runtime pkg/xpkg, ImageConfigStore:
// RewritePath, bestMatch) matches spec.matchImages[].prefix with
// strings.HasPrefix against the reference as written, not normalised: a
// package's spec.package (repository:tag or repository@digest) when it
// pulls, and a dependency's bare repository (CachedClient.ListVersions)
// when its resolver lists the versions a constraint may pick. The
// longest prefix of all wins, and spec.rewriteImage.prefix replaces it.
// The bare repository is therefore the prefix: it rewrites both forms
// (and the listing) into the copy's repository, and leaves every other
// repository of the registry alone. A plain prefix cannot end a name: a
// repository whose name merely begins with a mirrored one
// (org/provider-aws-s3control beside org/provider-aws-s3) is caught too,
// sent to where its copy would be; Strays says so of installed ones.
func MirrorConfigs(pkgs []*MirrorPackage, prefix, pullSecret string) []imageconfig.Config {
	prefix = strings.TrimSuffix(prefix, "/")
	repos := map[string]name.Repository{}
	for _, p := range pkgs {
		if r, err := name.NewRepository(p.Package, name.WeakValidation); err == nil {
			repos[r.Name()] = r
		}
	}
	taken := map[string]bool{}
	out := make([]imageconfig.Config, 0, len(repos)+1)
	for _, n := range slices.Sorted(maps.Keys(repos)) {
		r := repos[n]
		out = append(out, imageconfig.Config{
			Name:          mirrorConfigName(n, taken),
			Prefixes:      spellings(r),
			Rewrite:       true,
			RewritePrefix: prefix + "/" + r.RepositoryStr(),
		})
	}
	if pullSecret != "" {
		out = append(out, imageconfig.Config{
			Name:       "mirror-" + reference.DNSLabel(prefix) + "-pull",
			Prefixes:   []string{prefix + "/"},
			PullSecret: pullSecret,
		})
	}
	return out
}

// spellings are the ways a reference may write repository r, each a
// prefix of the same config: Docker Hub's is written docker.io/… as well
// as index.docker.io/… (Crossplane v2 asks for the registry, and for
// library/, in every reference).
func spellings(r name.Repository) []string {
	out := []string{r.Name()}
	if r.RegistryStr() == name.DefaultRegistry {
		out = append(out, "docker.io/"+r.RepositoryStr())
	}
	return out
}

// mirrorConfigName names repo's ImageConfig: mirror- and the repository
// as a DNS label; a name cut short, or one another repository of the
// set already took, ends in a hash of the repository.
func mirrorConfigName(repo string, taken map[string]bool) string {
	n := "mirror-" + reference.DNSLabel(repo)
	if len(repo) > 63 || taken[n] {
		sum := sha256.Sum256([]byte(repo))
		n = "mirror-" + reference.DNSLabel(repo[:min(len(repo), 54)]) + "-" + hex.EncodeToString(sum[:4])
	}
	taken[n] = true
	return n
}

// MirrorImageConfigs are MirrorConfigs as the objects to apply. The
// references in spec.package stay canonical, so the package names the
// resolver derives do not change.
func MirrorImageConfigs(pkgs []*MirrorPackage, prefix, pullSecret string) []map[string]any {
	var out []map[string]any
	for _, c := range MirrorConfigs(pkgs, prefix, pullSecret) {
		out = append(out, imageConfigObject(c))
	}
	return out
}

// imageConfigObject is c as an ImageConfig object.
func imageConfigObject(c imageconfig.Config) map[string]any {
	matches := make([]any, len(c.Prefixes))
	for i, p := range c.Prefixes {
		matches[i] = map[string]any{"type": "Prefix", "prefix": p}
	}
	spec := map[string]any{"matchImages": matches}
	if c.Rewrite {
		spec["rewriteImage"] = map[string]any{"prefix": c.RewritePrefix}
	}
	if c.PullSecret != "" {
		spec["registry"] = map[string]any{"authentication": map[string]any{"pullSecretRef": map[string]any{"name": c.PullSecret}}}
	}
	return map[string]any{
		"apiVersion": ImageConfigAPIVersion,
		"kind":       "ImageConfig",
		"metadata":   map[string]any{"name": c.Name},
		"spec":       spec,
	}
}
