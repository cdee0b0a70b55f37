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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
)

// DefaultFleetParallel bounds how many clusters a fleet reads at once:
// each cluster's read waits on its API server (and registries), not on
// this machine, so the bound is wide; it stops a kubeconfig of hundreds
// of contexts from opening hundreds of connections at once.
const DefaultFleetParallel = 32

// DefaultFleetTimeout bounds each cluster's whole read when the command
// line sets no --request-timeout.
const DefaultFleetTimeout = 30 * time.Second

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
	// Timeout bounds each member's whole read, its credential plugin
	// included (0: DefaultFleetTimeout; negative: none).
	Timeout time.Duration
	// Reads are the registry reads the members share.
	Reads *resolve.SharedReads
}

// Member is one cluster of a fleet: its kubeconfig context and the Config
// built for it.
type Member struct {
	Context string
	Config  *Config
	// Credential is the exec credential plugin the context runs ("" for
	// none): said when the member does not answer in time.
	Credential string
}

// NewFleet is a fleet of members, sorted by context; they share one
// SharedReads, and the discovery of each API server.
func NewFleet(members []Member) *Fleet {
	slices.SortFunc(members, func(a, b Member) int { return cmp.Compare(a.Context, b.Context) })
	shared := &cluster.SharedDiscovery{}
	for _, m := range members {
		m.Config.apiClients().ShareDiscovery(shared)
	}
	return &Fleet{Members: members, Reads: &resolve.SharedReads{}}
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
// failure is its answer's Err; the others still answer. Each member's
// read is bounded as a whole (Timeout): client-go runs an exec credential
// plugin without a context and waits for it, so a plugin that hangs (a
// login waiting for a browser) is not waited for but left behind, its
// answer a NoAnswer; so are the members still reading when ctx ends (an
// interrupt), which RunFleet then returns at once.
func RunFleet[T any](ctx context.Context, f *Fleet, read func(context.Context, *Config) (T, error)) []Answer[T] {
	out := make([]Answer[T], len(f.Members))
	sem := make(chan struct{}, cmp.Or(f.Parallel, DefaultFleetParallel))
	// Buffered: a member left behind never blocks on its answer.
	done := make(chan memberAnswer[T], len(f.Members))
	for i, m := range f.Members {
		out[i].Context = m.Context
		go func() {
			v, err := runMember(ctx, sem, f.timeout(), m, read)
			done <- memberAnswer[T]{i, v, err}
		}()
	}
	for range f.Members {
		a := <-done
		out[a.i].Value, out[a.i].Err = a.v, a.err
	}
	return out
}

type memberAnswer[T any] struct {
	i   int
	v   T
	err error
}

func (f *Fleet) timeout() time.Duration {
	if f.Timeout == 0 {
		return DefaultFleetTimeout
	}
	return f.Timeout
}

// runMember is one member's read, once its turn comes, given up on at the
// deadline or when ctx ends.
func runMember[T any](ctx context.Context, sem chan struct{}, timeout time.Duration, m Member, read func(context.Context, *Config) (T, error)) (T, error) {
	var zero T
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return zero, &NoAnswer{Cause: ctx.Err()}
	}
	defer func() { <-sem }()
	if ctx.Err() != nil { // its turn came with the interrupt
		return zero, &NoAnswer{Cause: ctx.Err()}
	}
	mctx, cancel := context.WithCancel(ctx)
	if timeout > 0 {
		cancel()
		mctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	inner := make(chan memberAnswer[T], 1)
	go func() {
		v, err := read(mctx, m.Config)
		inner <- memberAnswer[T]{v: v, err: err}
	}()
	var a memberAnswer[T]
	select {
	case a = <-inner:
	case <-mctx.Done():
		select {
		case a = <-inner: // it answered as the bound passed
		default:
			a.err = mctx.Err()
		}
	}
	if a.err != nil && mctx.Err() != nil {
		// What it says of its own deadline or cancel is said better here.
		return zero, &NoAnswer{Cause: mctx.Err(), After: timeout, Started: true, Credential: m.Credential}
	}
	return a.v, a.err
}

// NoAnswer is a member that did not answer within the fleet's bound
// (Cause context.DeadlineExceeded), or that was still reading, or not yet
// started, when the command was interrupted (context.Canceled).
type NoAnswer struct {
	Cause      error
	After      time.Duration
	Started    bool
	Credential string
}

func (e *NoAnswer) Error() string {
	switch {
	case errors.Is(e.Cause, context.DeadlineExceeded):
		with := ""
		if e.Credential != "" {
			with = ", its credential plugin " + e.Credential + " included"
		}
		return fmt.Sprintf("no answer within %s (the whole read%s): left out; --request-timeout sets this bound", e.After, with)
	case e.Started && e.Credential != "":
		return "still reading it when interrupted (credential plugin " + e.Credential + ")"
	case e.Started:
		return "still reading it when interrupted"
	}
	return "not read: interrupted before its turn"
}

func (e *NoAnswer) Unwrap() error { return e.Cause }

// Unanswered words why a cluster gave no answer, for its row:
// "<forbidden>", "<unauthorized>", "<unreachable>" (no connection, a
// timeout, no answer within the fleet's bound, a kubeconfig that does not
// load), "<interrupted>" or "<failed>".
func Unanswered(err error) string {
	var uerr *url.Error
	var nerr net.Error
	var na *NoAnswer
	switch {
	case errors.As(err, &na) && errors.Is(na.Cause, context.Canceled):
		return "<interrupted>"
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
	dc, err := cfg.apiClients().Discovery()
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
