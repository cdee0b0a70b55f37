package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// planOne plans one manifest: nil when it changes nothing.
func (pf *PlanFiles) planOne(ctx context.Context, w *wanted, overlay []installed.LockPackage) (*Plan, error) {
	if w.have == nil {
		return pf.planInstall(ctx, w, overlay)
	}
	edits := specEdits(w.have, w.m)
	if w.target == "" && len(edits) == 0 {
		return nil, nil
	}
	var p *Plan
	if w.read != nil {
		ch := pf.cfg.change(false)
		ch.Overlay = overlay
		var err error
		if p, err = ch.Check(ctx, w.read); err != nil {
			return nil, fmt.Errorf("%s: %w", w.m.Where, err)
		}
	} else {
		p = NewPlan(ActionUpdate, w.have.KindName(), "", "")
	}
	if len(edits) > 0 {
		p.add(pf.editFinding(ctx, w, edits))
	}
	return p, nil
}

// specEdits are the spec fields the manifest sets to another value than
// the cluster's package has, but its package: a field the manifest leaves
// out is the API server's to default, and no edit.
func specEdits(have *installed.Package, m Manifest) []string {
	want, _ := m.Object.Object["spec"].(map[string]any)
	got, _ := have.Object.Object["spec"].(map[string]any)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if k == "package" {
			continue
		}
		a, _ := json.Marshal(got[k])
		b, _ := json.Marshal(want[k])
		if string(a) != string(b) {
			out = append(out, fmt.Sprintf("spec.%s: %s → %s", k, a, b))
		}
	}
	return out
}

// editFinding says what a spec edit does on the running Crossplane: from
// v2.4 each edit makes a new revision (and restarts a provider's or
// function's runtime), and under Manual activation the running revision
// stops until the new one is activated.
func (pf *PlanFiles) editFinding(ctx context.Context, w *wanted, edits []string) findings.Finding {
	f := findings.Finding{Rule: findings.RuleSpecChange, Severity: findings.Info, Object: w.have.KindName()}
	running, err := pf.cfg.cluster.CrossplaneVersion(ctx, pf.cfg.XPNamespace)
	v24, known := diagnose.FromV24(running)
	effect := "Crossplane before v2.4 makes no new revision for it"
	switch {
	case err != nil || !known:
		effect = "on Crossplane v2.4 and later each spec edit makes a new revision (the running Crossplane's version could not be read)"
	case v24 && w.have.ActivationPolicy == "Manual":
		f.Severity = findings.Warning
		effect = fmt.Sprintf("Crossplane %s makes a new revision for it and, under Manual activation, deactivates the running one: %s runs nothing until the new revision is activated", running, w.have.KindName())
	case v24 && w.have.Kind != "Configuration":
		effect = fmt.Sprintf("Crossplane %s makes a new revision for it, and the runtime restarts", running)
	case v24:
		effect = fmt.Sprintf("Crossplane %s makes a new revision for it", running)
	}
	f.Message = fmt.Sprintf("%s (%s): %s; %s", w.have.KindName(), w.m.Where, strings.Join(edits, ", "), effect)
	return f
}

// planInstall plans a new package: what it would do to the Lock (a twin,
// a name the resolver would twin), its definitions being deleted, the
// target's validity and its Crossplane constraint; its dependencies are
// the set's prediction.
func (pf *PlanFiles) planInstall(ctx context.Context, w *wanted, overlay []installed.LockPackage) (*Plan, error) {
	c := pf.cfg.cluster
	reg, err := pf.cfg.Registry(ctx)
	if err != nil {
		return nil, err
	}
	in := &Install{Cluster: c, Registry: reg, Events: pf.cfg.Events, read: w.checked}
	spec := installed.InstallSpec{Kind: w.want.Kind, Name: w.want.Name, Package: w.target}
	p, err := in.Plan(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.m.Where, err)
	}
	p.Package, p.To = w.want.KindName(), w.target
	p.add(violationFindings(w.target, w.checked.Violations)...)
	if w.meta != nil {
		running, unread := c.CrossplaneVersion(ctx, pf.cfg.XPNamespace)
		if f := diagnose.CrossplaneVersionFinding(w.meta.Crossplane, running, unread, pf.cfg.XPNamespace, w.target); f != nil {
			p.add(*f)
		}
	}
	return p, nil
}

// absent lists the packages installed explicitly that no manifest names,
// and with Prune plans their uninstall.
func (pf *PlanFiles) absent(ctx context.Context, fp *FilesPlan, pkgs []*installed.Package, ws []*wanted) error {
	named := map[string]bool{}
	for _, w := range ws {
		named[w.want.KindName()] = true
	}
	for _, p := range pkgs {
		if origin, _ := installed.PackageOrigin(p.Object); named[p.KindName()] || origin == installed.OriginDependency {
			continue
		}
		fp.Absent = append(fp.Absent, p.KindName())
	}
	if !pf.Prune || len(fp.Absent) == 0 {
		return nil
	}
	u, err := NewUninstall(pf.cfg, false)
	if err != nil {
		return err
	}
	up, err := u.Plan(ctx, fp.Absent)
	if err != nil {
		return err
	}
	fp.Plans = append(fp.Plans, up.Plan)
	return nil
}

// readValidated reads a new package's target once, whole, where the
// package manager reads it: its meta object and what validate's rules
// find in it. A legacy package has neither.
func readValidated(ctx context.Context, reg *resolve.Registry, ref string, secrets []string, limits xpkg.Limits) (*xpkg.Checked, error) {
	read, so, err := reg.Locate(ctx, ref, secrets)
	if err != nil {
		return nil, err
	}
	p, err := source.Open(ctx, read, so)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if p.Format == source.FormatLegacy {
		return &xpkg.Checked{}, nil
	}
	if limits == (xpkg.Limits{}) {
		limits = xpkg.DefaultLimits
	}
	c, err := xpkg.ValidateStream(p.Stream(), limits)
	if err = p.Cause(err); err == nil {
		err = p.Close()
	}
	var syntax *xpkg.SyntaxError
	if errors.As(err, &syntax) {
		return &xpkg.Checked{Violations: []xpkg.Violation{{Document: syntax.Document, Rule: xpkg.RuleYAML, Message: syntax.Err.Error()}}}, nil
	}
	return c, err
}

// violationFindings: what validate finds in a new package's target, which
// Crossplane would refuse or install broken.
func violationFindings(target string, vs []xpkg.Violation) []findings.Finding {
	var out []findings.Finding
	for _, v := range vs {
		what := v.Message
		if v.Object != "" {
			what = v.Object + ": " + what
		}
		out = append(out, findings.Finding{Rule: findings.RuleInvalidPackage, Severity: findings.Blocking, Object: target,
			Message: fmt.Sprintf("%s is invalid (kubectl xpkg validate %s): %s [%s]", target, target, what, v.Rule)})
	}
	return out
}
