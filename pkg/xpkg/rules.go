package xpkg

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
)

// Rules, as named in violations.
const (
	RuleOneMeta      = "one-meta"
	RuleMetaVersion  = "meta-version"
	RuleAllowedKind  = "allowed-kind"
	RuleName         = "name"
	RuleCRD          = "crd"
	RuleDependency   = "dependency"
	RuleCrossplane   = "crossplane-version"
	RuleController   = "controller-image"
	RuleObjectHeader = "object-header"
	RuleYAML         = "yaml-stream"
	RuleMetadata     = "metadata-strings"
)

// Violation is one breach of a content rule.
type Violation struct {
	// Document is the index of the offending document, -1 for the package.
	Document int `json:"document"`
	// Object is "Kind name" of the offending document, if any.
	Object  string `json:"object,omitempty"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

func (v Violation) String() string {
	where := "package"
	if v.Document >= 0 {
		where = fmt.Sprintf("document %d", v.Document)
		if v.Object != "" {
			where += " (" + v.Object + ")"
		}
	}
	return fmt.Sprintf("%s: %s [%s]", where, v.Message, v.Rule)
}

func violation(o *Object, rule, format string, args ...any) Violation {
	v := Violation{Document: -1, Rule: rule, Message: fmt.Sprintf(format, args...)}
	if o != nil {
		v.Document = o.Index
		v.Object = strings.TrimSpace(o.GVK().Kind + " " + o.Name())
	}
	return v
}

// Validate checks every content rule of the xpkg specification and reports
// every violation, in document order.
func Validate(p *Package) []Violation {
	var out []Violation
	out = append(out, checkOneMeta(p)...)
	for _, o := range p.Objects {
		out = append(out, checkObject(p, o)...)
	}
	slices.SortStableFunc(out, func(a, b Violation) int { return a.Document - b.Document })
	return out
}

func checkOneMeta(p *Package) []Violation {
	var metas []string
	for _, o := range p.Objects {
		if IsMeta(o) {
			metas = append(metas, fmt.Sprint(o.Index))
		}
	}
	return oneMeta(metas)
}

// oneMeta checks that the package has exactly one meta object, given the
// documents that are meta objects.
func oneMeta(metas []string) []Violation {
	switch len(metas) {
	case 1:
		return nil
	case 0:
		return []Violation{violation(nil, RuleOneMeta,
			"no meta object: a package needs exactly one Provider, Configuration or Function of %s", MetaGroup)}
	}
	return []Violation{violation(nil, RuleOneMeta,
		"%d meta objects (documents %s): a package needs exactly one", len(metas), strings.Join(metas, ", "))}
}

func checkObject(p *Package, o *Object) []Violation {
	gvk := o.GVK()
	if gvk.Kind == "" || gvk.Version == "" {
		return []Violation{violation(o, RuleObjectHeader, "has no apiVersion or kind")}
	}
	var out []Violation
	if msg := nameProblem(o.Name()); msg != "" {
		out = append(out, violation(o, RuleName, "metadata.name %s", msg))
	}
	out = append(out, metadataViolations(o)...)
	if IsMeta(o) {
		return append(out, checkMeta(NewMeta(o))...)
	}
	if IsMetaGroup(gvk.Group) {
		return append(out, violation(o, RuleAllowedKind, "%s is not a package kind: use Provider, Configuration or Function", gvk.Kind))
	}
	if p.Meta != nil {
		if v, ok := checkAllowed(p.Meta.Kind, o); !ok {
			out = append(out, v)
		}
	}
	if gvk.Kind == "CustomResourceDefinition" || gvk.Kind == "CompositeResourceDefinition" {
		out = append(out, checkDefinition(o)...)
	}
	return out
}

// MetadataProblems finds labels and annotations whose values are not
// strings. Unquoted, YAML reads yes, no, on, off, true, false, null and
// numbers as booleans, null and numbers (Crossplane's parser, as go-yaml
// v2, reads YAML 1.1): Crossplane then refuses the whole package, and
// the Lock stalls on it.
func MetadataProblems(o *Object) []string {
	md, _ := o.Content["metadata"].(map[string]any)
	var out []string
	for _, field := range []string{"labels", "annotations"} {
		m, ok := md[field].(map[string]any)
		if !ok {
			if v, set := md[field]; set && v != nil {
				out = append(out, fmt.Sprintf("metadata.%s is a %s, not a map of strings", field, yamlType(v)))
			}
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			// A value left empty (example.org/a:) is null, which reads
			// into a string as "": Crossplane installs such a package.
			if _, ok := m[k].(string); !ok && m[k] != nil {
				out = append(out, fmt.Sprintf("metadata.%s[%s] is a %s (%v), not a string: quote the value in the YAML, or Crossplane refuses the package", field, k, yamlType(m[k]), m[k]))
			}
		}
	}
	return out
}

func metadataViolations(o *Object) []Violation {
	var out []Violation
	for _, msg := range MetadataProblems(o) {
		out = append(out, violation(o, RuleMetadata, "%s", msg))
	}
	return out
}

func checkMeta(m *Meta) []Violation {
	var out []Violation
	if !slices.Contains(metaVersions[m.Kind], m.Version) {
		out = append(out, violation(m.Object, RuleMetaVersion, "%s/%s is not a known version of %s (known: %s)",
			m.Group, m.Version, m.Kind, strings.Join(metaVersions[m.Kind], ", ")))
	}
	if m.Crossplane != "" {
		if _, err := semver.NewConstraint(m.Crossplane); err != nil {
			out = append(out, violation(m.Object, RuleCrossplane, "spec.crossplane version constraint %q does not parse: %v", m.Crossplane, err))
		}
	}
	if m.ControllerImage != "" {
		if _, err := name.ParseReference(m.ControllerImage); err != nil {
			out = append(out, violation(m.Object, RuleController, "spec.controller.image %q is not an image reference: %v", m.ControllerImage, err))
		}
	}
	for i, d := range m.DependsOn {
		for _, msg := range dependencyProblems(d) {
			out = append(out, violation(m.Object, RuleDependency, "spec.dependsOn[%d] %s", i, msg))
		}
	}
	return out
}

var digestVersion = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

func dependencyProblems(d Dependency) []string {
	problems := slices.Clone(d.Problems)
	if d.Package != "" {
		if _, err := name.NewRepository(d.Package); err != nil {
			problems = append(problems, fmt.Sprintf("package %q is not a repository (no tag or digest): %v", d.Package, err))
		}
	}
	switch {
	case d.Version == "":
		problems = append(problems, "has no version")
	case digestVersion.MatchString(d.Version):
	default:
		if _, err := semver.NewConstraint(d.Version); err != nil {
			problems = append(problems, fmt.Sprintf("version %q is neither a version, a semver constraint nor a digest: %v", d.Version, err))
		}
	}
	return problems
}
