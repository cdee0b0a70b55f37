package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// UpgradeRefused is the exit status of an upgrade the preflight refused;
// diff uses the same code for breaking changes.
const UpgradeRefused = DiffBreaking

// preflight compares the installed revision with the target and checks
// the cluster's stored versions; it returns an error when the upgrade
// must not go ahead. With --dry-run the whole report goes to stdout.
func (o *UpgradeOptions) preflight(ctx context.Context, c *cluster.Cluster, in *installed, target string, limits xpkg.Limits) error {
	what := strings.ToLower(in.pkg.Kind) + "/" + in.pkg.Name
	skip := "; pass --skip-preflight to upgrade without the check"
	old, new, r, err := comparePackages(ctx, o.root, [2]string{in.image, target}, [2]source.Options{in.options, in.options}, limits)
	if err != nil {
		return fmt.Errorf("preflight of %s: %w%s", what, err, skip)
	}
	stored, err := c.StoredVersions(ctx, diff.StoredCRDs(old))
	if err != nil {
		return fmt.Errorf("preflight of %s: %w%s", what, err, skip)
	}
	blockers := diff.Preflight(old, new, stored)
	var depWarnings []string
	if lock, err := c.Lock(ctx); err == nil {
		depWarnings = diff.DependencyWarnings(new, installedVersions(lock))
	} else {
		depWarnings = []string{fmt.Sprintf("could not read the Lock to check installed dependencies: %s", exit.Message(err))}
	}
	errOut := o.root.IOStreams.ErrOut
	if o.DryRun {
		fmt.Fprintf(o.root.IOStreams.Out, "Preflight of %s: %s against %s, stored versions of %d CRDs checked\n", what, in.image, target, len(stored))
		if err := diff.WriteText(o.root.IOStreams.Out, r, diff.TextOptions{}); err != nil {
			return err
		}
	} else {
		writePreflight(errOut, r)
	}
	for _, w := range depWarnings {
		fmt.Fprintf(errOut, "Warning: %s\n", w)
	}
	for _, b := range blockers {
		fmt.Fprintf(errOut, "Refused: %s\n", b)
	}
	if len(blockers) > 0 {
		b := blockers[0]
		more := ""
		if len(blockers) > 1 {
			more = fmt.Sprintf(" (and %d more stored versions)", len(blockers)-1)
		}
		return exit.WithCode(UpgradeRefused, fmt.Errorf("upgrade of %s refused: CRD %s stores objects at %s, which %s %s%s; migrate them to a version both serve and remove %s from the CRD's status.storedVersions (see docs/diff-rules.md), or pass --skip-preflight",
			what, b.CRD, b.Version, target, b.Problem, more, b.Version))
	}
	return nil
}

// writePreflight is the short form of the report an upgrade prints on
// stderr: the summary, the breaking changes as warnings, and the package
// metadata changes (dependencies among them).
func writePreflight(w io.Writer, r *diff.Report) {
	fmt.Fprintf(w, "Preflight: %s\n", r.Summary)
	for _, c := range r.Package {
		fmt.Fprintf(w, "  package: %s\n", c)
	}
	for _, obj := range r.Objects {
		for _, c := range obj.Changes {
			if c.Severity == diff.Breaking {
				fmt.Fprintf(w, "Warning: breaking change in %s: %s\n", obj.Label(), c)
			}
		}
	}
}

// installedVersions maps the Lock's repositories to their versions.
func installedVersions(lock []cluster.LockPackage) map[string]string {
	m := map[string]string{}
	for _, p := range lock {
		m[p.Source] = p.Version
	}
	return m
}
