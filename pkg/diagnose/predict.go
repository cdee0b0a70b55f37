package diagnose

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/flags"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// How a plan knows the package manager's configuration.
const (
	// ConfigRead: from the Deployment crossplane's arguments.
	ConfigRead = "deployment"
	// ConfigAssumed: as the user stated it (--assume-dependency-upgrades).
	ConfigAssumed = "assumed"
	// ConfigUnknown: neither; the plan assumes Crossplane's defaults and
	// says what the flags would change.
	ConfigUnknown = "unknown"
)

// Crossplane is what a plan knows of the running Crossplane: its release
// and the flags that change what its package manager does, and how it
// knows them.
type Crossplane struct {
	Version string `json:"version,omitempty"`
	flags.Config
	Read string `json:"read"`
	// Why says why the configuration could not be read (Read unknown).
	Why string `json:"why,omitempty"`
}

// CrossplaneOf is what a plan knows of the running Crossplane: its
// Deployment d as read (unread says why it could not be: an offline
// plan passes ErrOffline), and assume, --assume-dependency-upgrades ("":
// read them).
func CrossplaneOf(d *cluster.CrossplaneDeployment, unread error, namespace, assume string) Crossplane {
	cp := Crossplane{Config: flags.Defaults(), Read: ConfigUnknown}
	if unread == nil {
		cp.Config, cp.Version, cp.Read = flags.Parse(d.Args, d.Env), d.Version, ConfigRead
	} else {
		cp.Why = DeploymentUnread(unread, namespace)
	}
	if assume != "" {
		cp.Config, cp.Read = cp.Assume(assume), ConfigAssumed
	}
	return cp
}

// ErrOffline: an offline plan reads no Deployment.
var ErrOffline = errors.New("planned offline")

// DeploymentUnread says why the Deployment crossplane in namespace could
// not be read.
func DeploymentUnread(err error, namespace string) string {
	switch {
	case errors.Is(err, ErrOffline):
		return "planned offline"
	case apierrors.IsNotFound(err):
		return "no Deployment crossplane in " + namespace + " (--crossplane-namespace names another)"
	case apierrors.IsForbidden(err):
		return "you may not read the Deployment crossplane in " + namespace
	}
	return exit.Message(err)
}

// LockState is the Lock and the package objects, as they are or as a
// change leaves them.
type LockState struct {
	Lock    []installed.LockPackage
	Objects []resolve.Object
}

// StateOf is the cluster's state as it is.
func StateOf(lock []installed.LockPackage, pkgs []*installed.Package) LockState {
	return LockState{Lock: lock, Objects: Objects(pkgs)}
}

// With is s changed by entries, Lock entries of packages as a change
// leaves them (Name the package object's name, Type its kind). A package
// that exists moves to its entry's version: its entry of that source
// leaves the Lock and the new one is added at the end, as the package
// manager adds a new revision there; a new package's entry is added
// beside any other of its source (a twin, which the resolver refuses).
func (s LockState) With(entries ...installed.LockPackage) LockState {
	out := LockState{Lock: slices.Clone(s.Lock), Objects: slices.Clone(s.Objects)}
	for _, e := range entries {
		o := resolve.Object{Kind: e.Type, Name: e.Name, Repo: reference.Repository(e.Source), Version: e.Version}
		i := slices.IndexFunc(out.Objects, func(x resolve.Object) bool { return x.Kind == o.Kind && x.Name == o.Name })
		if i >= 0 {
			old := out.Objects[i].Repo
			out.Lock = slices.DeleteFunc(out.Lock, func(lp installed.LockPackage) bool { return installed.SameRepo(lp.Source, old) })
			out.Objects[i] = o
		} else {
			out.Objects = append(out.Objects, o)
		}
		out.Lock = append(out.Lock, e)
	}
	return out
}

// Settings are the resolver's settings the configuration makes.
func (c Crossplane) Settings() resolve.Settings {
	return resolve.Settings{Upgrades: c.Upgrades(), Downgrades: c.DependencyDowngrades}
}

// Objects are the package objects as the resolver finds them: the
// version of status.resolvedPackage where an ImageConfig rewrote it.
func Objects(pkgs []*installed.Package) []resolve.Object {
	out := make([]resolve.Object, 0, len(pkgs))
	for _, p := range pkgs {
		v := p.Version
		if p.ResolvedPackage != "" {
			v = reference.Version(p.ResolvedPackage)
		}
		out = append(out, resolve.Object{Kind: p.Kind, Name: p.Name, Repo: reference.Repository(p.Source), Version: v})
	}
	return out
}

// Prediction is what the package manager does after a change: the
// resolver's steps until the Lock resolves or stalls, and the packages
// that are then unhealthy, under the configuration the plan knows.
type Prediction struct {
	Crossplane Crossplane       `json:"crossplane"`
	Resolution *resolve.Outcome `json:"resolution"`
	// Otherwise is the outcome under the other setting of the
	// dependency-upgrade flags, when the configuration is unknown and
	// that outcome differs; Flag names the setting.
	Otherwise     *resolve.Outcome `json:"otherwise,omitempty"`
	OtherwiseFlag string           `json:"otherwiseFlag,omitempty"`

	before *resolve.Outcome
	noted  []findings.Finding
}

// Note adds findings that what the resolver does sets off (objects of a
// kind a dependency's move drops): Findings returns them too.
func (p *Prediction) Note(fs ...findings.Finding) { p.noted = append(p.noted, fs...) }

// Predict simulates the resolver over after, the Lock and the package
// objects as the change leaves them; before is the same of the cluster as
// it is, so that what the change causes is told from what was so already.
func Predict(src resolve.Source, cp Crossplane, before, after LockState) *Prediction {
	p := &Prediction{Crossplane: cp}
	p.Resolution = resolve.Simulate(src, cp.Settings(), after.Lock, after.Objects)
	p.before = resolve.Simulate(src, cp.Settings(), before.Lock, before.Objects)
	if cp.Read == ConfigUnknown {
		other := resolve.Settings{Upgrades: true, Downgrades: true}
		if o := resolve.Simulate(src, other, after.Lock, after.Objects); !sameOutcome(o, p.Resolution) {
			p.Otherwise, p.OtherwiseFlag = o, "--enable-dependency-version-downgrades"
		}
	}
	return p
}

func sameOutcome(a, b *resolve.Outcome) bool {
	return changeList(a) == changeList(b) && a.Resolves == b.Resolves && unhealthyList(a) == unhealthyList(b)
}

func changeList(o *resolve.Outcome) string {
	var s []string
	for _, c := range o.Changes {
		s = append(s, ChangeLine(c))
	}
	return strings.Join(s, "; ")
}

func unhealthyList(o *resolve.Outcome) string {
	var s []string
	for _, u := range o.Unhealthy {
		s = append(s, u.Package)
	}
	return strings.Join(s, ", ")
}

// ChangeLine says one change of the resolver in a phrase: "installs
// configuration/x (REPO) at v0.2.5 (the newest of the tags that satisfy
// >=v0.1.0)".
func ChangeLine(c resolve.Change) string {
	at := "at " + c.To
	if c.From != "" {
		at = fmt.Sprintf("from %s to %s", c.From, c.To)
	}
	return fmt.Sprintf("%ss %s (%s) %s (%s)", c.Action, c.Package, c.Repository, at, c.Reason)
}

// Findings are what the prediction finds to stop or warn of: a Lock that
// stalls (blocking, unless it stalls so already), packages the change
// leaves unhealthy (a warning, naming the version that would heal them;
// blocking when none can), what the plan could not follow, and, when the
// configuration is unknown, what the flags would change.
func (p *Prediction) Findings(target string) []findings.Finding {
	var out []findings.Finding
	o := p.Resolution
	if o.Stall != nil {
		out = append(out, p.stallFinding(target, o.Stall))
	}
	for _, u := range o.Unhealthy {
		// A stall is the story: what waits on it is in the resolution.
		if p.before.IsUnhealthy(u.Package) || o.Stall != nil {
			continue
		}
		if f := p.unhealthyFinding(target, u); f != nil {
			out = append(out, *f)
		}
	}
	out = append(out, p.noted...)
	if o.Unknown != "" {
		out = append(out, findings.Finding{Rule: findings.RuleLockStall, Severity: findings.Warning, Object: target,
			Message: fmt.Sprintf("the plan could not follow Crossplane's resolver to the end: %s; what it says of the dependencies stops there", o.Unknown)})
	}
	if f := p.configFinding(); f != nil {
		out = append(out, *f)
	}
	return out
}

func (p *Prediction) stallFinding(target string, s *resolve.Stall) findings.Finding {
	f := findings.Finding{Rule: findings.RuleLockStall, Severity: findings.Blocking, Object: s.Repository}
	if b := p.before.Stall; b != nil && b.Repository == s.Repository && b.Message == s.Message {
		f.Severity = findings.Warning
	}
	msg := fmt.Sprintf("after %s Crossplane's resolver stops at %s (%s)", target, s.Repository, s.Message)
	if len(s.Constraints) > 0 {
		msg += ", constrained by " + describe(s.Constraints)
	}
	msg += ": the Lock turns Resolved=False and no package in the cluster gets a dependency installed or moved until that is fixed"
	switch {
	case f.Severity == findings.Warning:
		msg += "; the Lock stalls there already (kubectl xpkg doctor)"
	case len(s.Roots) > 1:
		msg += fmt.Sprintf("; move %s together, in one change (plan -f with both manifests), to versions whose dependencies agree", strings.Join(s.Roots, " and "))
	case len(owners(s.Constraints)) > 1:
		msg += fmt.Sprintf("; move %s together, in one change, to versions that agree", strings.Join(owners(s.Constraints), " and "))
	case s.Newest != "":
		msg += fmt.Sprintf("; its newest version is %s: publish one that satisfies the constraint, or change it", s.Newest)
	}
	f.Message = msg
	return f
}

// unhealthyFinding: a package the resolver leaves unhealthy.
func (p *Prediction) unhealthyFinding(target string, u resolve.Unhealthy) *findings.Finding {
	f := &findings.Finding{Rule: findings.RuleDependencyConstraint, Severity: findings.Warning, Object: u.Package}
	f.Message = fmt.Sprintf("after %s %s is unhealthy (%s)", target, u.Package, u.Message)
	if !p.Crossplane.Upgrades() {
		f.Message += "; Crossplane moves an installed dependency only with --enable-dependency-version-upgrades, which it runs without"
	}
	switch {
	case u.Dependency == "":
	case u.Heal != "":
		f.Message += fmt.Sprintf("; %s heals it at %s, which every dependent accepts (kubectl xpkg upgrade %s %s)", u.Dependency, u.Heal, u.Dependency, u.Heal)
	default:
		f.Severity = findings.Blocking
		f.Message += fmt.Sprintf("; no version of %s satisfies every package that depends on it, so %s can never become healthy", u.Dependency, u.Package)
	}
	return f
}

// configFinding says what the plan knows of the flags: that it assumed
// them, and what they would change when they are unknown.
func (p *Prediction) configFinding() *findings.Finding {
	cp := p.Crossplane
	switch {
	case cp.Read == ConfigUnknown && p.Otherwise != nil:
		msg := fmt.Sprintf("Crossplane's configuration could not be read (%s): this plan assumes automatic dependency upgrades are off, Crossplane's default; with %s ", cp.Why, p.OtherwiseFlag)
		o := p.Otherwise
		switch {
		case o.Stall != nil:
			msg += fmt.Sprintf("the resolver would stop at %s (%s)", o.Stall.Repository, o.Stall.Message)
		case len(o.Changes) > 0:
			msg += "the package manager would instead: " + changeList(o)
		default:
			msg += "the outcome would differ"
		}
		if len(o.Unhealthy) > 0 {
			msg += "; unhealthy: " + unhealthyList(o)
		}
		msg += "; pass --assume-dependency-upgrades=off|upgrades|downgrades to plan for one"
		return &findings.Finding{Rule: findings.RuleCrossplaneConfig, Severity: findings.Warning, Message: msg}
	case cp.Read == ConfigAssumed:
		return &findings.Finding{Rule: findings.RuleCrossplaneConfig, Severity: findings.Info,
			Message: fmt.Sprintf("this plan assumes Crossplane runs %s, as --assume-dependency-upgrades says, and did not read its configuration", said(cp))}
	}
	return nil
}

// FlagsSaid says what the configuration's dependency-upgrade flags make
// the resolver do, in a phrase, and names the flag that makes it ("" for
// none).
func (c Crossplane) FlagsSaid() (string, string) {
	switch {
	case c.DependencyDowngrades:
		return "with automatic dependency upgrades and downgrades", "--enable-dependency-version-downgrades"
	case c.DependencyUpgrades:
		return "with automatic dependency upgrades", "--enable-dependency-version-upgrades"
	}
	return "without automatic dependency upgrades", ""
}

// said is FlagsSaid in one phrase.
func said(c Crossplane) string {
	what, flag := c.FlagsSaid()
	if flag != "" {
		return what + " (" + flag + ")"
	}
	return what
}

func describe(holds []versions.Hold) string {
	var s []string
	for _, h := range holds {
		s = append(s, fmt.Sprintf("%s (%s)", h.Constraint, h.By))
	}
	return strings.Join(s, ", ")
}

func owners(holds []versions.Hold) []string {
	var out []string
	for _, h := range holds {
		if !slices.Contains(out, h.By) {
			out = append(out, h.By)
		}
	}
	return out
}

// Resolving replaces, in fs, the warning that the Lock is not resolved
// (LockFindings) with a note that the change resolves it, when the
// prediction says the Lock resolves after it.
func (p *Prediction) Resolving(fs []findings.Finding) []findings.Finding {
	if p == nil || !p.Resolution.Resolves || p.before == nil || p.before.Resolves {
		return fs
	}
	out := make([]findings.Finding, 0, len(fs))
	for _, f := range fs {
		if f.Rule == findings.RuleDependencyUnresolved && f.Object == "lock/lock" {
			f.Severity = findings.Info
			f.Message = "the Lock does not resolve now; after the change it does: " + f.Message
		}
		out = append(out, f)
	}
	return out
}
