package predict

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
)

// state is what a plan predicts and the cluster shows: each package's
// version and health, and whether the Lock resolves.
type state struct {
	// Packages by kind/name ("configuration/a").
	Packages map[string]pkgState
	// Resolved is the status of the Lock's Resolved condition ("True",
	// "False"; "" before the resolver has written one).
	Resolved string
	// LockMessage is that condition's message, for the log only.
	LockMessage string
}

// pkgState is one package: the version its spec.package names (a tag or a
// digest) and whether it is Healthy. Pending: the package manager has not
// answered for the current spec yet, so it is neither healthy nor
// unhealthy. Message is the Healthy condition's message, for the log only.
type pkgState struct {
	Version string
	Healthy bool
	Pending bool
	Message string
}

const (
	healthy   = true
	unhealthy = false
)

// pkg is a package of an expected state.
type pkg struct {
	key, version string
	healthy      bool
}

// settled is the state of the packages pkgs with the Lock resolved or not.
func settled(resolves bool, pkgs ...pkg) state {
	s := state{Packages: map[string]pkgState{}, Resolved: "False"}
	if resolves {
		s.Resolved = "True"
	}
	for _, p := range pkgs {
		s.Packages[p.key] = pkgState{Version: p.version, Healthy: p.healthy}
	}
	return s
}

// packageKinds are the package kinds a state holds, by their names in a
// key ("configuration/a").
var packageKinds = map[string]schema.GroupVersionResource{
	"configuration": crossplane.ConfigurationGVR,
	"provider":      crossplane.ProviderGVR,
	"function":      crossplane.FunctionGVR,
}

// read reads the cluster's state.
func (s *suite) read(ctx context.Context) (state, error) {
	st := state{Packages: map[string]pkgState{}}
	for kind, gvr := range packageKinds {
		list, err := s.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return st, err
		}
		for _, u := range list.Items {
			st.Packages[kind+"/"+u.GetName()] = packageState(&u)
		}
	}
	lock, err := s.dyn.Resource(crossplane.LockGVR).Get(ctx, "lock", metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return st, err
	}
	if lock == nil {
		return st, nil
	}
	if c := crossplane.Condition(lock, "Resolved"); c != nil {
		st.Resolved, _ = c["status"].(string)
		st.LockMessage, _ = c["message"].(string)
	}
	return st, nil
}

// packageState reads one package. Its Healthy condition counts once it
// speaks of the current spec: written for this generation, with the
// current revision of the image spec.package names. Right after a change
// the condition still speaks of the old revision: the package is pending.
func packageState(u *unstructured.Unstructured) pkgState {
	ref, _, _ := unstructured.NestedString(u.Object, "spec", "package")
	cur, _, _ := unstructured.NestedString(u.Object, "status", "currentIdentifier")
	p := pkgState{Version: version(ref), Pending: true}
	if c := crossplane.Condition(u, "Healthy"); c != nil {
		gen, _, _ := unstructured.NestedInt64(c, "observedGeneration")
		p.Pending = gen != u.GetGeneration() || cur != ref
		p.Healthy = !p.Pending && c["status"] == "True"
		p.Message, _ = c["message"].(string)
	}
	return p
}

// version is the tag or the digest of a package reference.
func version(ref string) string {
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		return ref[i+1:]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[i+1:]
	}
	return ""
}

// diff says how got differs from want, a line per package and one for
// the Lock; "" when they agree. Messages do not count.
func diff(want, got state) string {
	var lines []string
	for _, k := range keys(want, got) {
		w, inWant := want.Packages[k]
		g, inGot := got.Packages[k]
		switch {
		case !inGot:
			lines = append(lines, fmt.Sprintf("%s: want %s, got none", k, w.short()))
		case !inWant:
			lines = append(lines, fmt.Sprintf("%s: want none, got %s", k, g.short()))
		case w.Version != g.Version || w.Healthy != g.Healthy || w.Pending != g.Pending:
			lines = append(lines, fmt.Sprintf("%s: want %s, got %s", k, w.short(), g.short()))
		}
	}
	if want.Resolved != got.Resolved {
		lines = append(lines, fmt.Sprintf("Lock: want Resolved=%s, got Resolved=%s %s", want.Resolved, got.Resolved, got.LockMessage))
	}
	return strings.Join(lines, "\n")
}

func keys(states ...state) []string {
	var out []string
	for _, s := range states {
		for k := range s.Packages {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (p pkgState) short() string {
	switch {
	case p.Pending:
		return p.Version + " pending"
	case p.Healthy:
		return p.Version + " healthy"
	}
	return p.Version + " unhealthy"
}

// String is the state as a record: a line per package, then the Lock, with
// the messages of what is not healthy or not resolved.
func (s state) String() string {
	var b strings.Builder
	for _, k := range keys(s) {
		p := s.Packages[k]
		fmt.Fprintf(&b, "  %s %s", k, p.short())
		if !p.Healthy && p.Message != "" {
			fmt.Fprintf(&b, ": %s", p.Message)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  Lock Resolved=%s", s.Resolved)
	if s.Resolved != "True" && s.LockMessage != "" {
		fmt.Fprintf(&b, ": %s", s.LockMessage)
	}
	return b.String()
}

// How long a step may take to settle, and how long it must then stay put:
// Crossplane may move again after a first answer.
const (
	settleTimeout = 3 * time.Minute
	settleHold    = 5 * time.Second
)

// settle waits until the cluster's state is want and still is settleHold
// later, and returns the last state read.
func (s *suite) settle(want state) (state, error) {
	var got state
	err := crossplane.Eventually(context.Background(), settleTimeout, func(ctx context.Context) error {
		var err error
		if got, err = s.read(ctx); err != nil {
			return err
		}
		if d := diff(want, got); d != "" {
			return errors.New(d)
		}
		time.Sleep(settleHold)
		// A context of its own: the hold has used some of this call's.
		hctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if got, err = s.read(hctx); err != nil {
			return err
		}
		if d := diff(want, got); d != "" {
			return fmt.Errorf("moved again within %s:\n%s", settleHold, d)
		}
		return nil
	})
	return got, err
}

// clear deletes every package, again while the resolver puts back a
// dependency whose dependent is still going, until none is left and the
// Lock is empty.
func (s *suite) clear() error {
	return crossplane.Eventually(context.Background(), settleTimeout, func(ctx context.Context) error {
		var left []string
		for kind, gvr := range packageKinds {
			list, err := s.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, u := range list.Items {
				left = append(left, kind+"/"+u.GetName())
				if u.GetDeletionTimestamp() == nil {
					if err := s.dyn.Resource(gvr).Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						return err
					}
				}
			}
		}
		lock, err := s.dyn.Resource(crossplane.LockGVR).Get(ctx, "lock", metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		var entries []any
		if lock != nil {
			entries, _, _ = unstructured.NestedSlice(lock.Object, "packages")
		}
		if len(left) > 0 || len(entries) > 0 {
			return fmt.Errorf("packages %v and %d Lock entries left", left, len(entries))
		}
		return nil
	})
}
