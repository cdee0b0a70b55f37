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
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
)

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
		Use:     "outdated [KIND]",
		Short:   "Show which installed packages are behind, what they may move to, and tags that drifted",
		Long:    helpLong("outdated"),
		Example: helpExample("outdated"),
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
	a, err := o.read(ctx, cfg, nil)
	if err != nil {
		return err
	}
	return cmp.Or(o.print(a.items, a.findings), action.UnreadError(a.items))
}

// read asks cfg's cluster what its packages run and may move to, the
// registry reads shared with other clusters' when shared is set.
func (o *OutdatedOptions) read(ctx context.Context, cfg *action.Config, shared *resolve.SharedReads) (*outdatedAnswer, error) {
	kind, err := resolveKind(cfg, o.kind)
	if err != nil {
		return nil, err
	}
	od, err := action.NewOutdated(ctx, cfg, o.Pre)
	if err != nil {
		return nil, err
	}
	od.Shared = shared
	items, _, err := od.Items(ctx, kind)
	if err != nil {
		return nil, err
	}
	return &outdatedAnswer{items, od.Findings()}, nil
}

// resolveKind is the package kind arg names; "" without one.
func resolveKind(cfg *action.Config, arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	return action.ResolveKind(cfg, arg)
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
