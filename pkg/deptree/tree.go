// Package deptree builds the dependency tree of a cluster's packages from
// its Lock, and renders it as text or as a Graphviz graph.
package deptree

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// Node is a package in the dependency tree.
type Node struct {
	Kind       string  `json:"kind,omitempty"`
	Name       string  `json:"name,omitempty"`
	Source     string  `json:"package"`
	Version    string  `json:"version,omitempty"`
	Constraint string  `json:"constraint,omitempty"`
	Installed  string  `json:"installed"`
	Healthy    string  `json:"healthy"`
	Children   []*Node `json:"dependencies,omitempty"`
	// Cycle marks a dependency already shown above it on its path.
	Cycle bool `json:"cycle,omitempty"`
}

// Build makes the dependency tree from the Lock, with each node's health
// from the installed packages and their current revisions (as get shows
// it: installed.Health). Roots are the packages nothing depends on, or
// the one named root.
func Build(lock []installed.LockPackage, pkgs []*installed.Package, revs map[*installed.Package]*installed.Revision, root string) ([]*Node, error) {
	bySource := map[string]installed.LockPackage{}
	needed := map[string]bool{}
	for _, lp := range lock {
		bySource[reference.Repository(lp.Source)] = lp
		for _, d := range lp.Dependencies {
			needed[reference.Repository(d.Package)] = true
		}
	}
	var roots []string
	for _, p := range pkgs {
		repo := reference.Repository(p.Source)
		if (root == "" && !needed[repo]) || p.Name == root {
			roots = append(roots, repo)
		}
	}
	if root != "" && len(roots) == 0 {
		return nil, fmt.Errorf("no package named %q: see kubectl xpkg get", root)
	}
	slices.Sort(roots)
	var out []*Node
	for _, r := range slices.Compact(roots) {
		out = append(out, node(r, "", bySource, pkgs, revs, map[string]bool{}))
	}
	return out, nil
}

func node(repo, constraint string, lock map[string]installed.LockPackage, pkgs []*installed.Package, revs map[*installed.Package]*installed.Revision, path map[string]bool) *Node {
	n := &Node{Source: repo, Constraint: constraint, Installed: "Unknown", Healthy: "Unknown"}
	if lp, ok := lock[repo]; ok {
		n.Version = lp.Version
	}
	if i := slices.IndexFunc(pkgs, func(p *installed.Package) bool { return reference.Repository(p.Source) == repo }); i >= 0 {
		p := pkgs[i]
		n.Kind, n.Name = p.Kind, p.Name
		if n.Version == "" {
			n.Version = p.Version
		}
		n.Installed, n.Healthy = installed.Health(p, revs[p], func(t string) string {
			if c := p.Condition(t); c != nil {
				return c.Status
			}
			return "Unknown"
		})
	} else {
		n.Installed = "False"
	}
	if path[repo] {
		n.Cycle = true
		return n
	}
	path[repo] = true
	defer delete(path, repo)
	for _, d := range lock[repo].Dependencies {
		n.Children = append(n.Children, node(reference.Repository(d.Package), d.Constraints, lock, pkgs, revs, path))
	}
	return n
}

// WriteText prints the tree with box-drawing branches.
func WriteText(out io.Writer, roots []*Node) error {
	w := &printers.ErrWriter{W: out}
	for _, r := range roots {
		fmt.Fprintln(w, r.label())
		writeChildren(w, r.Children, "")
	}
	return w.Err
}

func writeChildren(w io.Writer, nodes []*Node, prefix string) {
	for i, n := range nodes {
		branch, next := "├── ", "│   "
		if i == len(nodes)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintln(w, prefix+branch+n.label())
		writeChildren(w, n.Children, prefix+next)
	}
}

func (n *Node) label() string {
	var b strings.Builder
	if n.Name != "" {
		fmt.Fprintf(&b, "%s ", installed.KindName(n.Kind, n.Name))
	}
	b.WriteString(n.Source)
	if n.Version != "" {
		b.WriteString(" " + n.Version)
	}
	if n.Constraint != "" {
		b.WriteString(" (wants " + n.Constraint + ")")
	}
	switch {
	case n.Cycle:
		b.WriteString(" [dependency cycle]")
	case n.Name == "":
		b.WriteString(" [not installed]")
	default:
		fmt.Fprintf(&b, " [installed: %s, healthy: %s]", n.Installed, n.Healthy)
	}
	return b.String()
}

// WriteDot prints the tree as a Graphviz digraph.
func WriteDot(out io.Writer, roots []*Node) error {
	w := &printers.ErrWriter{W: out}
	fmt.Fprintln(w, "digraph packages {\n  rankdir=LR;\n  node [shape=box];")
	seen := map[string]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if !seen[n.Source] {
			seen[n.Source] = true
			color := "black"
			if n.Healthy != "True" {
				color = "red"
			}
			// \n in a label is dot's own line break.
			fmt.Fprintf(w, "  %s [label=%s, color=%s];\n", dotString(n.Source),
				dotString(dotLabelText(n.Source)+`\n`+dotLabelText(n.Version)), color)
		}
		for _, c := range n.Children {
			fmt.Fprintf(w, "  %s -> %s [label=%s];\n", dotString(n.Source), dotString(c.Source), dotString(dotLabelText(c.Constraint)))
			if !c.Cycle {
				walk(c)
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	fmt.Fprintln(w, "}")
	return w.Err
}

// dotString quotes s as a DOT ID, where \" is the only escape (Go's %q
// escapes would reach the drawing as text).
func dotString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// dotLabelText keeps s's backslashes from reading as a label's escapes.
func dotLabelText(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }
