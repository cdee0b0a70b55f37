package diff

import (
	"fmt"
	"slices"
)

// Change is one difference between the packages.
type Change struct {
	// Version is the API version of a definition the change is in.
	Version string `json:"version,omitempty"`
	// Path is the field (spec.forProvider.region, items as [*], map
	// values as .*) or the aspect (dependsOn[…], permissions) changed.
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
	// Rule names the rule that classified the change (see Rules).
	Rule string `json:"rule"`
}

func (c Change) String() string {
	where := c.Version
	if c.Path != "" {
		where = join(where, c.Path)
	}
	if where != "" {
		where += ": "
	}
	return fmt.Sprintf("%s%s [%s, %s]", where, c.Message, c.Severity, c.Rule)
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// Object statuses.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// ObjectDiff is what happened to one object, matched by kind and name.
type ObjectDiff struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Changes    []Change `json:"changes"`
	// Diff is a unified diff of the normalised YAML (sorted keys), for
	// Compositions and webhook configurations.
	Diff string `json:"diff,omitempty"`
}

// Label is "Kind name".
func (o *ObjectDiff) Label() string { return o.Kind + " " + o.Name }

// Breaking tells whether any of the object's changes breaks an upgrade.
func (o *ObjectDiff) Breaking() bool { return anyBreaking(o.Changes) }

func anyBreaking(cs []Change) bool {
	return slices.ContainsFunc(cs, func(c Change) bool { return c.Severity == Breaking })
}

// Side describes one of the packages compared.
type Side struct {
	// Source is where the package came from, as given.
	Source string `json:"source"`
	// Reference and Digest identify a registry image.
	Reference string `json:"reference,omitempty"`
	Digest    string `json:"digest,omitempty"`
	// Kind and Name are the package's meta kind and name.
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
}

// Summary counts objects and changes.
type Summary struct {
	Added      int  `json:"added"`
	Removed    int  `json:"removed"`
	Changed    int  `json:"changed"`
	Unchanged  int  `json:"unchanged"`
	Changes    int  `json:"changes"`
	Breaking   int  `json:"breaking"`
	Compatible int  `json:"compatible"`
	Different  bool `json:"different"`
	// Package tells whether the package metadata changed.
	Package bool `json:"packageChanged"`
}

func (s Summary) String() string {
	if !s.Different {
		return fmt.Sprintf("no differences (%d %s)", s.Unchanged, plural(s.Unchanged, "object", "objects"))
	}
	meta := ""
	if s.Package {
		meta = "package metadata changed; "
	}
	return fmt.Sprintf("%s%d %s changed, %d added, %d removed, %d unchanged; %d %s: %d breaking, %d compatible", meta,
		s.Changed, plural(s.Changed, "object", "objects"), s.Added, s.Removed, s.Unchanged,
		s.Changes, plural(s.Changes, "change", "changes"), s.Breaking, s.Compatible)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Report is the comparison of two packages.
type Report struct {
	Old     Side    `json:"old"`
	New     Side    `json:"new"`
	Summary Summary `json:"summary"`
	// Package holds the changes to the package metadata (kind,
	// constraints, dependencies, controller, permissions, annotations).
	Package []Change `json:"package"`
	// Objects are the objects added, removed or changed, in the order:
	// changed and removed by kind and name, then added.
	Objects []ObjectDiff `json:"objects"`
}

// Breaking tells whether any change breaks an upgrade.
func (r *Report) Breaking() bool { return r.Summary.Breaking > 0 }

// Different tells whether the packages differ at all.
func (r *Report) Different() bool { return r.Summary.Different }

// summarize counts; unchanged is the number of objects in both packages
// that did not change.
func (r *Report) summarize(unchanged int) {
	s := Summary{Unchanged: unchanged}
	count := func(cs []Change) {
		for _, c := range cs {
			s.Changes++
			if c.Severity == Breaking {
				s.Breaking++
			} else {
				s.Compatible++
			}
		}
	}
	count(r.Package)
	s.Package = len(r.Package) > 0
	for _, o := range r.Objects {
		switch o.Status {
		case Added:
			s.Added++
		case Removed:
			s.Removed++
		default:
			s.Changed++
		}
		count(o.Changes)
	}
	s.Different = s.Changes > 0 || s.Added+s.Removed+s.Changed > 0
	r.Summary = s
	r.nonNil()
}

// nonNil makes the lists empty rather than null in JSON and YAML.
func (r *Report) nonNil() {
	if r.Package == nil {
		r.Package = []Change{}
	}
	if r.Objects == nil {
		r.Objects = []ObjectDiff{}
	}
}

// BreakingOnly is the report cut down to its breaking changes and the
// objects that have some; the summary still counts everything.
func (r *Report) BreakingOnly() *Report {
	out := *r
	out.Package = breakingOf(r.Package)
	out.Objects = nil
	for _, o := range r.Objects {
		if o.Breaking() {
			o.Changes = breakingOf(o.Changes)
			o.Diff = ""
			out.Objects = append(out.Objects, o)
		}
	}
	out.nonNil()
	return &out
}

func breakingOf(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if c.Severity == Breaking {
			out = append(out, c)
		}
	}
	return out
}
