package action

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
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
		p.Destination = versionRef(repo, p.Version)
	}
	return nil
}

// rewrite is one source prefix and the destination prefix it moves to.
type rewrite struct{ from, to string }

// mirrorRewrites are the rewrites that send the package manager from
// each package to its copy: one per registry host, of the longest
// directory every mirrored repository of that host shares (so that
// nothing else of the host is redirected).
func mirrorRewrites(pkgs []*MirrorPackage, prefix string) []rewrite {
	dirs := map[string][]string{} // host → the repositories' directories
	var hosts []string
	for _, p := range pkgs {
		r, err := name.NewRepository(p.Package, name.WeakValidation)
		if err != nil {
			continue
		}
		host := r.RegistryStr()
		if _, ok := dirs[host]; !ok {
			hosts = append(hosts, host)
		}
		segs := strings.Split(r.RepositoryStr(), "/")
		dirs[host] = append(dirs[host], strings.Join(segs[:len(segs)-1], "/"))
	}
	slices.Sort(hosts)
	prefix = strings.TrimSuffix(prefix, "/") + "/"
	out := make([]rewrite, 0, len(hosts))
	for _, h := range hosts {
		dir := commonDir(dirs[h])
		if dir != "" {
			dir += "/"
		}
		out = append(out, rewrite{from: h + "/" + dir, to: prefix + dir})
	}
	return out
}

// commonDir is the longest leading run of path segments every dir shares.
func commonDir(dirs []string) string {
	common := strings.Split(dirs[0], "/")
	for _, d := range dirs[1:] {
		segs := strings.Split(d, "/")
		n := 0
		for n < len(common) && n < len(segs) && common[n] == segs[n] {
			n++
		}
		common = common[:n]
	}
	return strings.Join(common, "/")
}

// MirrorImageConfigs are the ImageConfigs that send Crossplane's
// package manager to the copies: one spec.rewriteImage per source prefix
// (the references in spec.package stay canonical, so the package names
// the resolver derives do not change); with pullSecret, one more that
// gives the copies' registry that Secret, since the package manager
// looks for a pull secret for the rewritten reference.
func MirrorImageConfigs(pkgs []*MirrorPackage, prefix, pullSecret string) []map[string]any {
	var out []map[string]any
	for _, rw := range mirrorRewrites(pkgs, prefix) {
		out = append(out, newImageConfig("mirror-"+reference.DNSLabel(strings.TrimSuffix(rw.from, "/")), rw.from, map[string]any{
			"rewriteImage": map[string]any{"prefix": rw.to},
		}))
	}
	if pullSecret != "" {
		to := strings.TrimSuffix(prefix, "/") + "/"
		out = append(out, newImageConfig("mirror-"+reference.DNSLabel(strings.TrimSuffix(to, "/"))+"-pull", to, map[string]any{
			"registry": map[string]any{"authentication": map[string]any{"pullSecretRef": map[string]any{"name": pullSecret}}},
		}))
	}
	return out
}

func newImageConfig(name, prefix string, spec map[string]any) map[string]any {
	spec["matchImages"] = []any{map[string]any{"type": "Prefix", "prefix": prefix}}
	return map[string]any{
		"apiVersion": ImageConfigAPIVersion,
		"kind":       "ImageConfig",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}
}
