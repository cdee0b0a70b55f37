// Package imageconfig applies Crossplane's ImageConfigs
// (pkg.crossplane.io/v1beta1) to a package reference the way the package
// manager of Crossplane v2.3 and v2.4 does (crossplane-runtime pkg/xpkg,
// ImageConfigStore.RewritePath, PullSecretFor and bestMatch): of the
// ImageConfigs that set a rewrite, the one with the longest matching
// spec.matchImages[].prefix rewrites the reference, that config's longest
// matching prefix replaced by spec.rewriteImage.prefix; then, of those
// that set a pull secret, the one with the longest prefix matching the
// rewritten reference supplies it. Prefixes match with strings.HasPrefix
// against the reference as written, never normalised (no index.docker.io
// added): a package's spec.package, with its tag or digest, and, when the
// resolver lists the versions of a dependency, its bare repository.
package imageconfig

import "strings"

// Reasons an ImageConfig applies, as Crossplane records them in a
// package's status.appliedImageConfigRefs.
const (
	ReasonRewrite    = "RewriteImage"
	ReasonPullSecret = "SetImagePullSecret"
	ReasonVerify     = "VerifyImage"
)

// Config is one ImageConfig: what it matches and what it sets.
type Config struct {
	Name string
	// Prefixes are spec.matchImages[].prefix.
	Prefixes []string
	// RewritePrefix is spec.rewriteImage.prefix ("" when unset).
	RewritePrefix string
	// Rewrite tells that spec.rewriteImage is set (an empty prefix is
	// then an error, as for the package manager).
	Rewrite bool
	// PullSecret is spec.registry.authentication.pullSecretRef.name.
	PullSecret string
	// Verify tells that spec.verification is set.
	Verify bool
}

// Applied is one ImageConfig that applied to a reference, and why.
type Applied struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Resolution is what the ImageConfigs make of a reference.
type Resolution struct {
	// Ref is the reference as given; Resolved what is read (Ref when
	// nothing rewrote it).
	Ref, Resolved string
	// PullSecret is the secret an ImageConfig supplies for Resolved, in
	// Crossplane's namespace ("" for none).
	PullSecret string
	// Applied are the ImageConfigs that applied, rewrite first.
	Applied []Applied
	// Unverified names the ImageConfig that would have the package
	// manager verify the image's signature, which reads here do not do.
	Unverified string
}

// Resolve applies configs to ref.
func Resolve(configs []Config, ref string) (Resolution, error) {
	r := Resolution{Ref: ref, Resolved: ref}
	if c := bestMatch(configs, ref, func(c *Config) bool { return c.Rewrite }); c != nil {
		if c.RewritePrefix == "" {
			return r, &Error{Config: c.Name, Problem: "sets spec.rewriteImage without a prefix"}
		}
		match := ""
		for _, p := range c.Prefixes {
			if strings.HasPrefix(ref, p) && len(p) > len(match) {
				match = p
			}
		}
		r.Resolved = c.RewritePrefix + strings.TrimPrefix(ref, match)
		r.Applied = append(r.Applied, Applied{Name: c.Name, Reason: ReasonRewrite})
	}
	if c := bestMatch(configs, r.Resolved, func(c *Config) bool { return c.PullSecret != "" }); c != nil {
		r.PullSecret = c.PullSecret
		r.Applied = append(r.Applied, Applied{Name: c.Name, Reason: ReasonPullSecret})
	}
	if c := bestMatch(configs, r.Resolved, func(c *Config) bool { return c.Verify }); c != nil {
		r.Unverified = c.Name
	}
	return r, nil
}

// Rewritten names the ImageConfig that rewrote the reference, or "".
func (r Resolution) Rewritten() string {
	for _, a := range r.Applied {
		if a.Reason == ReasonRewrite {
			return a.Name
		}
	}
	return ""
}

// Names are the ImageConfigs that applied, each once, in order.
func (r Resolution) Names() []string {
	var out []string
	for _, a := range r.Applied {
		if len(out) == 0 || out[len(out)-1] != a.Name {
			out = append(out, a.Name)
		}
	}
	return out
}

// bestMatch is the valid config with the longest prefix of image (an
// empty prefix never matches); the first listed wins a tie. The package
// manager lists them from its informer cache, in no set order, so that
// which of two configs with one prefix it takes is not determined.
func bestMatch(configs []Config, image string, valid func(*Config) bool) *Config {
	var best *Config
	longest := 0
	for i := range configs {
		c := &configs[i]
		if !valid(c) {
			continue
		}
		for _, p := range c.Prefixes {
			if strings.HasPrefix(image, p) && len(p) > longest {
				longest, best = len(p), c
			}
		}
	}
	return best
}

// Error is an ImageConfig the package manager would refuse to apply.
type Error struct {
	Config, Problem string
}

func (e *Error) Error() string {
	return "ImageConfig " + e.Config + " " + e.Problem + ": the package manager cannot pull through it either; fix the ImageConfig"
}
