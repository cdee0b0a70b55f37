package teardown

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// Runner carries a Plan out on one cluster.
type Runner struct {
	Cluster *cluster.Cluster
	// Wait bounds each stage's wait for its objects to go; Interval is
	// how often they are read meanwhile.
	Wait, Interval time.Duration
	// DryRun sends every write with the API server's dry run, and waits
	// for nothing.
	DryRun bool
	// Say tells of progress (stderr); Done of each step made (the results).
	Say, Done func(format string, args ...any)

	done []string
}

// StageError is a stage whose objects did not all go within Wait: each
// one left, and why it stays.
type StageError struct {
	Stage string
	Wait  time.Duration
	Left  []string
	Done  []string
}

func (e *StageError) Error() string {
	return fmt.Sprintf("the %s did not all go within %s (--wait); nothing further was deleted; still there: %s (deletions sent: %s). Run the same command again to go on from here",
		e.Stage, cluster.Round(e.Wait), strings.Join(e.Left, "; "), strings.Join(e.Done, ", "))
}

// ExitCode is that of a wait that timed out.
func (e *StageError) ExitCode() int { return exit.WaitTimedOut }

// Run carries the teardown out: with ModeOrphan each managed resource is
// first set to keep what it manages (put back if the teardown stops
// before it deletes anything); then each stage's objects are deleted,
// users before what their Usages protect, and waited for before the next
// stage. The package itself is the caller's to delete, after.
func (r *Runner) Run(ctx context.Context, p *Plan) (err error) {
	if p.Mode == ModeOrphan {
		// The policies set so far are put back when the teardown stops
		// before its first deletion: within keep too (the result err,
		// not one of this block).
		set, kerr := r.keep(ctx, p)
		defer func() {
			if err != nil && !r.deleted() {
				err = r.putBack(ctx, set, err)
			}
		}()
		if kerr != nil {
			return kerr
		}
	}
	for _, st := range Stages {
		if err := r.stage(ctx, p, st); err != nil {
			return err
		}
	}
	return nil
}

// kept is a managed resource whose policies were set, and what they were.
type kept struct {
	o              *Object
	now            *unstructured.Unstructured
	deletion       string
	hadDeletion    bool
	management     []string
	hadManagement  bool
	setDel, setMgm bool
	// toDel, toMgm are what keep set; unsure, that its request went
	// unanswered: it may have been made.
	toDel  string
	toMgm  []string
	unsure bool
}

// keep sets the policies of each managed resource that would delete what
// it manages so that it keeps it.
func (r *Runner) keep(ctx context.Context, p *Plan) ([]kept, error) {
	var set []kept
	for _, o := range p.Managed() {
		if err := ctx.Err(); err != nil {
			return set, err
		}
		deletion, management := keepPolicies(o.u)
		if fate, _ := externalFate(o.u); fate == FateKept {
			continue
		}
		k := kept{o: o}
		k.deletion, k.hadDeletion, _ = unstructured.NestedString(o.u.Object, "spec", "deletionPolicy")
		k.management, k.hadManagement, _ = unstructured.NestedStringSlice(o.u.Object, "spec", "managementPolicies")
		k.setDel, k.setMgm = deletion != "", management != nil
		k.toDel, k.toMgm = deletion, management
		now, err := r.Cluster.SetPolicies(ctx, o.gvr, o.u, deletion, management, r.DryRun)
		if err != nil {
			var ua *cluster.UnansweredError
			if k.unsure = errors.As(err, &ua); k.unsure {
				set = append(set, k)
			}
			return set, fmt.Errorf("set %s %s to keep what it manages: %w", o.gvr.Resource, o.display(), err)
		}
		k.now = now
		set = append(set, k)
	}
	if already := len(p.Managed()) - len(set); len(set) > 0 || already > 0 {
		r.note("%d managed resource(s) set to keep their external resources; %d keep theirs already", len(set), already)
	}
	return set, nil
}

// putBack restores the policies keep set, the teardown having stopped
// before it deleted anything.
func (r *Runner) putBack(ctx context.Context, set []kept, cause error) error {
	ctx = context.WithoutCancel(ctx)
	var failed []string
	n := 0
	for _, k := range set {
		if k.unsure {
			landed, err := r.landed(ctx, &k) //nolint:contextcheck // put back after the interruption too
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", k.o.display(), err))
			}
			if !landed {
				continue
			}
		}
		if k.now == nil {
			continue
		}
		deletion, management := "", []string(nil)
		if k.setDel {
			deletion = "Delete"
			if k.hadDeletion {
				deletion = k.deletion
			}
		}
		if k.setMgm {
			management = []string{"*"}
			if k.hadManagement {
				management = k.management
			}
		}
		if _, err := r.Cluster.SetPolicies(ctx, k.o.gvr, k.now, deletion, management, r.DryRun); err != nil { //nolint:contextcheck // put back after the interruption too
			failed = append(failed, fmt.Sprintf("%s: %v", k.o.display(), err))
			continue
		}
		n++
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w; the teardown stopped before deleting anything, and these policies could not be put back: %s", cause, strings.Join(failed, "; "))
	}
	return fmt.Errorf("%w; the teardown stopped before deleting anything: the policies of %d managed resource(s) were put back", cause, n)
}

// landed reads the object whose policies keep set without an answer:
// whether they were set (then k.now is the object read).
func (r *Runner) landed(ctx context.Context, k *kept) (bool, error) {
	u, err := r.Cluster.GetResource(ctx, k.o.gvr, k.o.Namespace, k.o.Name)
	if err != nil || u == nil || u.GetUID() != k.o.u.GetUID() {
		return false, err
	}
	del, _, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy")
	mgmt, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "managementPolicies")
	if (k.setDel && del != k.toDel) || (k.setMgm && !slices.Equal(mgmt, k.toMgm)) {
		return false, nil
	}
	k.now = u
	return true, nil
}

func (r *Runner) deleted() bool { return len(r.done) > 0 }

func (r *Runner) note(format string, args ...any) {
	if r.Done != nil {
		r.Done(format, args...)
	}
}

// stage deletes the objects of one stage, in layers (an object protected
// by a Usage waits for its users), and waits for each layer to go.
func (r *Runner) stage(ctx context.Context, p *Plan, st string) error {
	var left []*Object
	for gi := range p.Groups {
		if p.Groups[gi].Stage != st {
			continue
		}
		for oi := range p.Groups[gi].Objects {
			left = append(left, &p.Groups[gi].Objects[oi])
		}
	}
	for len(left) > 0 {
		var now, later []*Object
		for _, o := range left {
			if usedByAny(o, left) {
				later = append(later, o)
			} else {
				now = append(now, o)
			}
		}
		if len(now) == 0 {
			now, later = later, nil // a cycle: all at once
		}
		for _, o := range now {
			if err := ctx.Err(); err != nil {
				return r.stopped(err, st)
			}
			if err := r.Cluster.DeleteObject(ctx, o.gvr, o.Namespace, o.Name, string(o.u.GetUID()), r.DryRun); err != nil {
				return r.stopped(fmt.Errorf("delete %s %s: %w", o.gvr.Resource, o.display(), err), st)
			}
			r.done = append(r.done, o.gvr.Resource+"/"+o.display())
		}
		if err := r.waitGone(ctx, st, now); err != nil {
			return err
		}
		r.note("%s deleted (%s)", counted(len(now), st), perKind(now))
		left = later
	}
	return nil
}

// counted is n objects of a stage: "1 of the managed resources", "3
// managed resources".
func counted(n int, stage string) string {
	if n == 1 {
		return "1 of the " + stage
	}
	return fmt.Sprintf("%d %s", n, stage)
}

// perKind counts objs by kind: "NopResource 2, XNet 1".
func perKind(objs []*Object) string {
	n := map[string]int{}
	var kinds []string
	for _, o := range objs {
		k := kindOf(o)
		if n[k] == 0 {
			kinds = append(kinds, k)
		}
		n[k]++
	}
	slices.Sort(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, n[k])
	}
	return strings.Join(parts, ", ")
}

// usedByAny: o is protected by a Usage whose user is among objs.
func usedByAny(o *Object, objs []*Object) bool {
	for _, user := range o.UsedBy {
		for _, other := range objs {
			if name := kindOf(other) + " " + other.Name; other != o && (user == name || strings.HasPrefix(user, name+" ")) {
				return true
			}
		}
	}
	return false
}

// kindOf is the object's kind as a Usage names it.
func kindOf(o *Object) string {
	if o.u == nil {
		return ""
	}
	return o.u.GetKind()
}

// StoppedError is a teardown stopped between steps (an interruption, a
// failed write): its stage, the deletions it sent, and why.
type StoppedError struct {
	Stage string
	Sent  []string
	Err   error
}

func (e *StoppedError) Error() string {
	msg := fmt.Sprintf("the teardown stopped in its %s stage; deletions sent: %s; run the same command again to go on", e.Stage, cmp.Or(strings.Join(e.Sent, ", "), "none"))
	if !errors.Is(e.Err, context.Canceled) {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *StoppedError) Unwrap() error { return e.Err }

// stopped says what the teardown did before err stopped it.
func (r *Runner) stopped(err error, st string) error {
	return &StoppedError{Stage: st, Sent: slices.Clone(r.done), Err: err}
}

// waitGone reads the objects' kinds every Interval (one metadata list
// each) until none of objs is left, or Wait passes: then a StageError
// names each one left, with its finalizers and what its conditions say.
func (r *Runner) waitGone(ctx context.Context, st string, objs []*Object) error {
	if r.DryRun {
		return nil
	}
	deadline := time.Now().Add(r.Wait)
	said := -1
	for {
		left, err := r.left(ctx, objs)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if len(left) != said && r.Say != nil {
			r.Say("Waiting up to %s for the %s to go: %d left (%s)", cluster.Round(time.Until(deadline)), st, len(left), perKind(left))
			said = len(left)
		}
		if !time.Now().Add(r.Interval).Before(deadline) {
			return &StageError{Stage: st, Wait: r.Wait, Left: r.why(ctx, left), Done: r.done}
		}
		select {
		case <-ctx.Done():
			return r.stopped(ctx.Err(), st)
		case <-time.After(r.Interval):
		}
	}
}

// left are those of objs that still exist (the same UID).
func (r *Runner) left(ctx context.Context, objs []*Object) ([]*Object, error) {
	live := map[schema.GroupVersionResource]map[string]bool{}
	for _, o := range objs {
		if live[o.gvr] != nil {
			continue
		}
		uids := map[string]bool{}
		crd := &cluster.CRD{Name: o.gvr.GroupResource().String(), Group: o.gvr.Group, Plural: o.gvr.Resource, Served: []string{o.gvr.Version}, Storage: o.gvr.Version}
		if err := r.Cluster.EachObject(ctx, crd, func(m cluster.ObjectMeta) { uids[m.UID] = true }); err != nil {
			return nil, err
		}
		live[o.gvr] = uids
	}
	var out []*Object
	for _, o := range objs {
		if live[o.gvr][string(o.u.GetUID())] {
			out = append(out, o)
		}
	}
	return out, nil
}

// why names each object left and what holds it: its finalizers, and the
// messages of its Synced and Ready conditions.
func (r *Runner) why(ctx context.Context, left []*Object) []string {
	var out []string
	for _, o := range left {
		line := o.gvr.Resource + "/" + o.display()
		u, err := r.Cluster.GetResource(ctx, o.gvr, o.Namespace, o.Name)
		if err != nil || u == nil {
			out = append(out, line)
			continue
		}
		if fs := u.GetFinalizers(); len(fs) > 0 {
			line += " (finalizers: " + strings.Join(fs, ", ") + ")"
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if t, _ := m["type"].(string); (t == "Synced" || t == "Ready") && m["status"] != "True" {
				msg, _ := m["message"].(string)
				line += fmt.Sprintf(" %s=%v: %s", t, m["status"], cmp.Or(msg, fmt.Sprint(m["reason"])))
			}
		}
		if len(o.UsedBy) > 0 {
			line += "; used by " + strings.Join(o.UsedBy, ", ")
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}
