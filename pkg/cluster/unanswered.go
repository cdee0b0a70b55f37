package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// UnansweredError is a change (a PATCH, a DELETE) the API server may have
// received and made, whose answer did not come: timed out
// (--request-timeout), cut short, interrupted. What the cluster now holds
// is unknown, and the message says so, and where to look.
type UnansweredError struct {
	// What is the change ("change of provider/p"); Object what to describe.
	What, Object string
	Err          error
}

func (e *UnansweredError) Error() string {
	return fmt.Sprintf("no answer to the %s (%s): it may have been made; %s shows where it stands",
		e.What, unansweredReason(e.Err), lookAt(e.Object))
}

// lookAt is the command that shows object (KIND/NAME, or
// RESOURCE[/NAMESPACE]/NAME): kubectl xpkg describe for a package,
// kubectl get for anything else, which describe does not read.
func lookAt(object string) string {
	parts := strings.Split(object, "/")
	switch {
	case len(parts) == 2 && slices.Contains([]string{"provider", "configuration", "function"}, parts[0]):
		return "kubectl xpkg describe " + object
	case len(parts) == 3:
		return "kubectl get " + parts[0] + " " + parts[2] + " -n " + parts[1] + " -o yaml"
	}
	return "kubectl get " + object + " -o yaml"
}

func (e *UnansweredError) Unwrap() error { return e.Err }

// Worded: the message says all there is to say (the exit package prints
// it as is, not as an unreachable server).
func (e *UnansweredError) Worded() {}

// unanswered wraps the error of a change request in an UnansweredError
// unless it is an answer (the API server's status: nothing or exactly
// that happened) or the request never left (refused, no such host).
func unanswered(err error, what, object string) error {
	var status apierrors.APIStatus
	var dns *net.DNSError
	if err == nil || errors.As(err, &status) || errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) {
		return err
	}
	return &UnansweredError{What: what, Object: object, Err: err}
}

func unansweredReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout(), strings.Contains(err.Error(), "Client.Timeout"):
		return "timed out"
	}
	return "cut short: " + strings.Join(strings.Fields(err.Error()), " ")
}
