package diff

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// compareMeta compares the package metadata objects.
func compareMeta(o, n *xpkg.Meta) []Change {
	if o.Kind != n.Kind {
		return []Change{newChange(RulePackageKind, "kind", fmt.Sprintf("package kind changed from %s to %s", o.Kind, n.Kind))}
	}
	var out []Change
	if o.Group != n.Group || o.Version != n.Version {
		out = append(out, newChange(RuleMetaChanged, "apiVersion", fmt.Sprintf("%s/%s → %s/%s", o.Group, o.Version, n.Group, n.Version)))
	}
	if o.Name() != n.Name() {
		out = append(out, newChange(RuleMetaChanged, "metadata.name", fmt.Sprintf("%s → %s", o.Name(), n.Name())))
	}
	out = append(out, compareCrossplane(o.Crossplane, n.Crossplane)...)
	out = append(out, compareDependencies(o.DependsOn, n.DependsOn)...)
	if o.ControllerImage != n.ControllerImage {
		out = append(out, newChange(RuleControllerImage, "spec.controller.image", fmt.Sprintf("%s → %s", orNone(o.ControllerImage), orNone(n.ControllerImage))))
	}
	out = append(out, comparePermissions(o.Object, n.Object)...)
	oa, _ := metadata(o.Object)["annotations"].(map[string]any)
	na, _ := metadata(n.Object)["annotations"].(map[string]any)
	for _, note := range mapChanges(oa, na) {
		out = append(out, newChange(RuleMetaAnnotation, "metadata.annotations", note))
	}
	if paths := changedPaths(o.Content, n.Content, metaIgnored); len(paths) > 0 {
		out = append(out, newChange(RuleMetaChanged, "", "changed: "+list(paths, 6)))
	}
	return out
}

func metadata(o *xpkg.Object) map[string]any {
	m, _ := o.Content["metadata"].(map[string]any)
	return m
}

// metaIgnored are the meta fields the rules above read.
func metaIgnored(p string) bool {
	switch p {
	case "apiVersion", "kind", "metadata.name", "metadata.annotations", "spec.crossplane",
		"spec.dependsOn", "spec.controller.image", "spec.controller.permissionRequests":
		return true
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// compareCrossplane probes the two constraints with Crossplane's release
// lines: a version the old accepted and the new refuses narrows it.
func compareCrossplane(o, n string) []Change {
	const path = "spec.crossplane.version"
	switch {
	case o == n:
		return nil
	case o == "":
		return []Change{newChange(RuleCrossplaneNarrowed, path, fmt.Sprintf("constraint %q imposed", n))}
	case n == "":
		return []Change{newChange(RuleCrossplaneChanged, path, fmt.Sprintf("constraint %q lifted", o))}
	}
	msg := fmt.Sprintf("%q → %q", o, n)
	lost, ok := versions.Narrowed(o, n, versions.CrossplaneReleases()...)
	if ok && len(lost) > 0 {
		return []Change{newChange(RuleCrossplaneNarrowed, path, fmt.Sprintf("%s: refuses %s", msg, versionSpan(lost)))}
	}
	return []Change{newChange(RuleCrossplaneChanged, path, msg)}
}

// dependencyKey matches dependencies by kind and repository.
func dependencyKey(d xpkg.Dependency) string {
	return d.Kind + " " + strings.TrimSuffix(d.Package, "/")
}

func compareDependencies(o, n []xpkg.Dependency) []Change {
	olds := map[string]xpkg.Dependency{}
	for _, d := range o {
		olds[dependencyKey(d)] = d
	}
	var out []Change
	seen := map[string]bool{}
	for _, nd := range n {
		k := dependencyKey(nd)
		seen[k] = true
		path := "spec.dependsOn[" + nd.Package + "]"
		od, ok := olds[k]
		switch {
		case !ok:
			out = append(out, newChange(RuleDependencyAdded, path, fmt.Sprintf("%s added (%s)", kindOr(nd), orNone(nd.Version))))
		case od.Version != nd.Version:
			out = append(out, dependencyConstraint(path, od, nd))
		}
	}
	for _, od := range o {
		if !seen[dependencyKey(od)] {
			out = append(out, newChange(RuleDependencyRemoved, "spec.dependsOn["+od.Package+"]", fmt.Sprintf("%s removed (was %s)", kindOr(od), orNone(od.Version))))
		}
	}
	return out
}

func kindOr(d xpkg.Dependency) string {
	if d.Kind == "" {
		return "package"
	}
	return d.Kind
}

func dependencyConstraint(path string, o, n xpkg.Dependency) Change {
	msg := fmt.Sprintf("%s constraint %q → %q", kindOr(n), o.Version, n.Version)
	if lost, ok := versions.Narrowed(o.Version, n.Version); ok && len(lost) > 0 {
		return newChange(RuleDependencyNarrowed, path, fmt.Sprintf("%s, refusing %s", msg, versionSpan(lost)))
	}
	return newChange(RuleDependencyChanged, path, msg)
}

// comparePermissions compares spec.controller.permissionRequests as sets
// of policy rules.
func comparePermissions(o, n *xpkg.Object) []Change {
	rules := func(obj *xpkg.Object) []any {
		spec, _ := obj.Content["spec"].(map[string]any)
		ctrl, _ := spec["controller"].(map[string]any)
		l, _ := ctrl["permissionRequests"].([]any)
		return l
	}
	or, nr := rules(o), rules(n)
	var out []Change
	const path = "spec.controller.permissionRequests"
	for _, r := range setDiff(nr, or) {
		out = append(out, newChange(RulePermissionAdded, path, "requests "+policyRule(r)))
	}
	for _, r := range setDiff(or, nr) {
		out = append(out, newChange(RulePermissionRemoved, path, "no longer requests "+policyRule(r)))
	}
	return out
}

func policyRule(r any) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// versionSpan names the versions probed and lost: all of them when few,
// else the lowest and highest.
func versionSpan(lost []string) string {
	if len(lost) <= 3 {
		return strings.Join(lost, ", ")
	}
	return fmt.Sprintf("%d probed versions from %s to %s", len(lost), lost[0], lost[len(lost)-1])
}
