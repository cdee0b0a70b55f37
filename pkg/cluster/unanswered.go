package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
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
	return fmt.Sprintf("no answer to the %s (%s): it may have been made; kubectl xpkg describe %s shows where it stands",
		e.What, unansweredReason(e.Err), e.Object)
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
