package plugin

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

var outdatedExample = `  # What every installed package runs, may move to, and could move to
  kubectl xpkg outdated

  # Providers only, with why a package is held back and the digest it runs
  kubectl xpkg outdated providers -o wide

  # For a script: {"items": [{"name", "kind", "package", "current", "wanted", "latest", "drifted", ...}]}
  kubectl xpkg outdated -o json`

// OutdatedOptions holds the flags and state of `kubectl xpkg outdated`.
type OutdatedOptions struct {
	Output      string
	Pre         bool
	XPNamespace string
	Source      SourceFlags
	Cluster     ClusterFlags
	Fleet       FleetFlags

	kind string
	root *Root
}

// OutdatedReport is outdated -o json|yaml.
type OutdatedReport struct {
	Items []*action.Item `json:"items"`
	// Findings are about provider families (rule family-skew).
	Findings []findings.Finding `json:"findings,omitempty"`
}

// NewCmdOutdated builds `kubectl xpkg outdated`.
func NewCmdOutdated(root *Root) *cobra.Command {
	o := &OutdatedOptions{root: root, XPNamespace: defaultXPNamespace}
	cmd := &cobra.Command{
		Use:   "outdated [KIND]",
		Short: "Show which installed packages are behind, what they may move to, and tags that drifted",
		Long: `Outdated prints one row per installed package:

* CURRENT: the version its active revision runs
* WANTED: the newest version that every installed package's dependsOn constraint on
  it admits (from the Lock, and from the versions those packages move to), and whose
  own dependencies can be met (each installed dependency runs, or moves to, a version
  its constraint admits; each other has a matching version in its registry): what
  upgrade --all moves it to
* LATEST: the newest stable version in its registry
* DRIFT: yes when the tag it runs now names other content (another digest) than its
  active revision runs: someone pushed over the tag. Crossplane resolves a tag again
  only when it reconciles the package, so until then it keeps running the old content

Pre-releases count for WANTED with --pre, or when the package runs one; LATEST is
always stable. A package pinned by digest (repository:tag@sha256:...) cannot drift,
but still shows a newer tag. -o wide adds a provider's FAMILY (its current revision's
label pkg.crossplane.io/provider-family), the digest each package runs and what holds
WANTED below LATEST: dependents' constraints, and newer versions whose own
dependencies cannot be met (the package manager would install them and leave them
unhealthy).

Provider families are judged after the table (rule family-skew): a family whose
family provider and members run more than one version (members depend on it at
>= 0.0.0, so Crossplane reports nothing), a member in another registry or org than its
family provider (Crossplane's RBAC manager then grants it none of the family's types),
a family with two family providers.

No field records the digest a revision runs; its name derives from it: up to
Crossplane v2.3 the digest's first 12 hex digits, from v2.4 those of
sha256("<digest hex>|<package generation>"). A digest (the pin, or the tag's) is shown,
and DRIFT decided, by checking it against the name under both namings; where no
digest is at hand it is <unknown>.

It lists the packages (one request per package kind) and the provider revisions (one),
reads the Lock once, and each
distinct repository once: its tags, and the digest of the tag its packages run, a
few repositories at a time, with the packages' pull secrets; then the meta object of
each version a package would move to (not the rest of its layer). Every package is
decided, also when one kind is asked for. A repository that
cannot be read leaves its rows marked and the exit status 1.`,
		Example: outdatedExample,
		GroupID: groupCluster,
		Args:    cobra.MaximumNArgs(1),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "Output format: wide, json or yaml.")
	completeOutput(cmd, "wide", "json", "yaml")
	f.BoolVar(&o.Pre, "pre", false, "Count pre-release versions for WANTED.")
	f.StringVar(&o.XPNamespace, "crossplane-namespace", defaultXPNamespace, "Namespace of Crossplane and of the packages' pull secrets.")
	o.Source.AddRegistryFlags(f)
	o.Cluster.AddFlags(f)
	o.Fleet.AddFlags(f)
	cmd.ValidArgsFunction = completeKinds
	return cmd
}

// Complete keeps the kind.
func (o *OutdatedOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root = root
	if len(args) == 1 {
		o.kind = args[0]
	}
	return nil
}

// Validate checks the flags.
func (o *OutdatedOptions) Validate() error {
	return printers.CheckFormat(o.Output, printers.FormatWide, printers.FormatJSON, printers.FormatYAML)
}

// Run reads and prints.
func (o *OutdatedOptions) Run(ctx context.Context) error {
	fleet, err := o.root.fleet(&o.Fleet, &o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	if fleet != nil {
		return o.runFleet(ctx, fleet)
	}
	cfg, err := o.root.config(&o.Cluster, &o.Source, o.XPNamespace)
	if err != nil {
		return err
	}
	kind := ""
	if o.kind != "" {
		if kind, err = action.ResolveKind(cfg, o.kind); err != nil {
			return err
		}
	}
	od, err := action.NewOutdated(ctx, cfg, o.Pre)
	if err != nil {
		return err
	}
	items, _, err := od.Items(ctx, kind)
	if err != nil {
		return err
	}
	return cmp.Or(o.print(items, od.Findings()), action.UnreadError(items))
}

func (o *OutdatedOptions) print(items []*action.Item, fs []findings.Finding) error {
	out := o.root.IOStreams.Out
	switch o.Output {
	case printers.FormatJSON, printers.FormatYAML:
		return printers.PrintObject(out, o.Output, OutdatedReport{Items: items, Findings: fs})
	}
	if len(items) == 0 {
		fmt.Fprintln(o.root.IOStreams.ErrOut, "No packages found.")
		return nil
	}
	t := printers.NewTable(outdatedHeader(o.Output == printers.FormatWide)...)
	for _, it := range items {
		t.Row(o.row(it)...)
	}
	if err := t.Render(out); err != nil {
		return err
	}
	return findings.WriteLines(out, fs)
}

func ifRead(it *action.Item, s string) string {
	if it.Error != "" {
		return "<unknown>"
	}
	return orNone(shortDigest(s))
}

func driftMark(it *action.Item) string {
	switch {
	case it.Error != "":
		return "<unknown>"
	case it.Pinned:
		return "pinned"
	case it.Drifted:
		return "yes"
	case !it.DriftKnown():
		return "<unknown>"
	}
	return "no"
}

func heldBy(it *action.Item) string {
	var out []string
	for _, h := range it.HeldBy {
		out = append(out, h.By+" "+h.Constraint)
	}
	for _, b := range it.Blocked {
		out = append(out, b.Version+" "+b.Reason)
	}
	return strings.Join(out, ", ")
}

// shortDigest shortens a digest for a table (sha256: and 12 hex digits);
// tags pass unchanged.
func shortDigest(s string) string {
	if hex, ok := strings.CutPrefix(s, "sha256:"); ok && len(hex) > 12 {
		return "sha256:" + hex[:12] + "…"
	}
	return s
}
