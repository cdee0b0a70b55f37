package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// DefaultFleetParallel bounds how many clusters a fleet reads at once:
// each cluster's read waits on its API server (and registries), not on
// this machine, so the bound is wide; it stops a kubeconfig of hundreds
// of contexts from opening hundreds of connections at once.
const DefaultFleetParallel = 32

// Fleet runs one read verb (get, outdated, doctor, version) against
// several clusters, the contexts of a kubeconfig, at once. Each member has
// its own Config (its own rest config, credentials and exec plugin, as
// kubectl builds them per context); nothing of one member's credentials
// reaches another's reads. The members share Reads: registry reads whose
// resolved reference and credentials are the same are made once.
type Fleet struct {
	// Members are the clusters, sorted by name.
	Members []Member
	// Parallel bounds the members read at once (0: DefaultFleetParallel).
	Parallel int
	// Reads are the registry reads the members share.
	Reads *SharedReads
}

// Member is one cluster of a fleet: its kubeconfig context and the Config
// built for it.
type Member struct {
	Context string
	Config  *Config
}

// NewFleet is a fleet of members, sorted by context; they share one
// SharedReads.
func NewFleet(members []Member) *Fleet {
	slices.SortFunc(members, func(a, b Member) int { return cmp.Compare(a.Context, b.Context) })
	return &Fleet{Members: members, Reads: &SharedReads{}}
}

// Answer is what one cluster answered: Value, or the error that kept it
// from answering.
type Answer[T any] struct {
	Context string
	Value   T
	Err     error
}

// RunFleet calls read for each member with its Config, Parallel at a
// time, and returns the answers in the members' order. One member's
// failure is its answer's Err; the others still answer.
func RunFleet[T any](ctx context.Context, f *Fleet, read func(context.Context, *Config) (T, error)) []Answer[T] {
	out := make([]Answer[T], len(f.Members))
	sem := make(chan struct{}, cmp.Or(f.Parallel, DefaultFleetParallel))
	var wg sync.WaitGroup
	for i, m := range f.Members {
		out[i].Context = m.Context
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i].Value, out[i].Err = read(ctx, m.Config)
		})
	}
	wg.Wait()
	return out
}

// Unanswered words why a cluster gave no answer, for its row:
// "<forbidden>", "<unauthorized>", "<unreachable>" (no connection, a
// timeout, a kubeconfig that does not load) or "<failed>".
func Unanswered(err error) string {
	var uerr *url.Error
	var nerr net.Error
	switch {
	case apierrors.IsForbidden(err):
		return "<forbidden>"
	case apierrors.IsUnauthorized(err):
		return "<unauthorized>"
	case errors.As(err, &uerr), errors.As(err, &nerr), errors.Is(err, context.DeadlineExceeded),
		apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsServiceUnavailable(err),
		strings.HasPrefix(err.Error(), "load kubeconfig: "):
		return "<unreachable>"
	}
	return "<failed>"
}

// FleetError is the error of the clusters that did not answer, one line
// each naming the context (exit status 1): the others' answers are
// printed first.
func FleetError(failed map[string]error) error {
	if len(failed) == 0 {
		return nil
	}
	names := make([]string, 0, len(failed))
	for n := range failed {
		names = append(names, n)
	}
	slices.Sort(names)
	var errs exit.Several
	for _, n := range names {
		several, ok := failed[n].(exit.Several)
		if !ok {
			several = exit.Several{failed[n]}
		}
		for _, err := range several {
			errs = append(errs, fmt.Errorf("context %s: %w", n, err))
		}
	}
	return exit.WithCode(exit.Unanswered, errs)
}

// Reachable asks cfg's API server for its version: the one request that
// tells a cluster that does not answer (while a warm discovery cache still
// does) from one that answers and refuses reads.
func Reachable(cfg *Config) error {
	dc, err := cfg.Clients().Discovery()
	if err != nil {
		return err
	}
	_, err = dc.ServerVersion()
	return err
}

// SelectContexts picks the contexts of a kubeconfig (have) that patterns
// name: each an exact name or a glob (path.Match: *, ?, [...]); all
// picks every one. A name no context has, or a glob no context matches,
// is an error: a typo must not silently leave a cluster out.
func SelectContexts(have, patterns []string, all bool) ([]string, error) {
	if all {
		if len(have) == 0 {
			return nil, errors.New("the kubeconfig has no contexts: kubectl config get-contexts lists them")
		}
		return slices.Sorted(slices.Values(have)), nil
	}
	var out []string
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("--context %q is no glob: %w", p, err)
		}
		n := 0
		for _, c := range have {
			if ok, _ := path.Match(p, c); ok {
				n++
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("no context %q in the kubeconfig (kubectl config get-contexts lists them)", p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// IsContextGlob tells whether a --context value is a glob rather than a
// name.
func IsContextGlob(s string) bool { return strings.ContainsAny(s, "*?[") }
