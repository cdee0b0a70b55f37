package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

var versionsExample = `  # The versions of a package, newest first, the installed one marked
  kubectl xpkg versions crossplane-contrib/provider-nop

  # Only those a dependency constraint admits, pre-releases included
  kubectl xpkg versions xpkg.crossplane.io/crossplane-contrib/provider-helm --constraint '>=1.3 <2' --pre`

// VersionsOptions holds the flags and state of `kubectl xpkg versions`.
type VersionsOptions struct {
	Pre         bool
	Constraint  string
	Output      string
	Source      SourceFlags
	Cluster     ClusterFlags
	XPNamespace string
	repo        string
	root        *Root
}

// VersionsReport is one tag of versions -o json|yaml.
type VersionsReport struct {
	Tag       string   `json:"tag"`
	Semver    bool     `json:"semver"`
	Installed []string `json:"installedAs,omitempty"`
}

// NewCmdVersions builds `kubectl xpkg versions`.
func NewCmdVersions(root *Root) *cobra.Command {
	o := &VersionsOptions{root: root}
	cmd := &cobra.Command{
		Use:   "versions REPOSITORY",
		Short: "List a package repository's versions, newest first, marking the installed one",
		Long: `Versions lists the tags of a package repository ordered by semantic version, newest
first, with tags that are no semantic version last. Pre-releases show only with --pre;
--constraint keeps the versions a semver range admits (and then drops the tags that are
no version). When a cluster is reachable, the repository is read as its package manager
reads it (through the ImageConfig that rewrites it, with an ImageConfig's pull secret;
--no-image-config reads it as written), and the version each installed package of the
repository runs is marked.`,
		Example: versionsExample,
		GroupID: groupLocal,
		Args:    exactArgs(1, "REPOSITORY"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.BoolVar(&o.Pre, "pre", false, "Include pre-release versions.")
	f.StringVar(&o.Constraint, "constraint", "", "Only the versions this semver range admits, e.g. '>=0.9 <1'.")
	f.StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: a table).")
	completeOutput(cmd, "json", "yaml")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane and of the pull secrets its ImageConfigs name.")
	o.Source.AddRegistryFlags(f)
	o.Cluster.AddFlags(f)
	return cmd
}

// Complete keeps the argument.
func (o *VersionsOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root, o.repo = root, args[0]
	return nil
}

// Validate checks the flags.
func (o *VersionsOptions) Validate() error { return printers.CheckFormat(o.Output) }

// Run lists, orders, filters and marks the tags.
func (o *VersionsOptions) Run(ctx context.Context) error {
	repo := o.repo
	so, _, err := o.Source.Options()
	if err != nil {
		return err
	}
	c := o.connect()
	read, rso := repo, so
	if c != nil { // read where the cluster's package manager reads
		reg, err := clusterRegistry(ctx, o.root, c, o.XPNamespace, &o.Source, so)
		if err != nil {
			return err
		}
		if full, err := source.ParseReference(repo, so.Registry); err == nil {
			repo = full.Context().Name()
		}
		if read, rso, err = reg.Read(ctx, repo, nil); err != nil {
			return err
		}
	}
	names, err := source.ListTags(ctx, read, rso)
	if err != nil {
		return err
	}
	tags := versions.Sort(names)
	if o.Constraint != "" || !o.Pre {
		kept, err := versions.Filter(tags, o.Constraint, o.Pre)
		if err != nil {
			return err
		}
		if o.Constraint == "" { // without a range, tags that are no version stay
			kept = append(kept, slices.DeleteFunc(slices.Clone(tags), func(t versions.Tag) bool { return t.Version != nil })...)
		}
		tags = kept
	}
	report := o.mark(ctx, c, repo, so, tags)
	if o.Output != "" {
		return printers.PrintObject(o.root.IOStreams.Out, o.Output, report)
	}
	if len(report) == 0 {
		fmt.Fprintln(o.root.IOStreams.ErrOut, "No versions found.")
		return nil
	}
	t := printers.NewTable("VERSION", "INSTALLED")
	for _, r := range report {
		t.Row(r.Tag, orEmpty(r.Installed))
	}
	return t.Render(o.root.IOStreams.Out)
}

// connect is the cluster, or nil when it cannot be reached: versions
// works without one.
func (o *VersionsOptions) connect() *cluster.Cluster {
	c, err := o.Cluster.connect(o.root)
	if err != nil {
		return nil
	}
	return c
}

// mark notes which installed packages run each tag.
func (o *VersionsOptions) mark(ctx context.Context, c *cluster.Cluster, repo string, so source.Options, tags []versions.Tag) []VersionsReport {
	installed := map[string][]string{}
	if full, err := source.ParseReference(repo, so.Registry); err == nil {
		if c != nil {
			pkgs, err := c.List(ctx, "", "")
			if err != nil {
				// A mark that could not be checked is said, not left blank.
				fmt.Fprintf(o.root.IOStreams.ErrOut, "Warning: the installed packages could not be listed, so none is marked: %s\n", exit.Message(err))
			}
			for _, p := range pkgs {
				if reference.Repository(p.Source) == full.Context().Name() {
					installed[p.Version] = append(installed[p.Version], p.KindName())
				}
			}
		}
	}
	out := make([]VersionsReport, 0, len(tags))
	for _, t := range tags {
		out = append(out, VersionsReport{Tag: t.Name, Semver: t.Version != nil, Installed: installed[t.Name]})
	}
	return out
}

func orEmpty(s []string) string { return strings.Join(s, ", ") }
