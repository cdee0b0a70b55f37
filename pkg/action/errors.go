package action

import (
	"context"
	"errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// Gate lets a planned change go ahead, or refuses it (exit status 3) when
// a blocking finding stopped it (refused is not nil), unless force, which
// goes ahead and says so on ev.
func Gate(refused *RefusedError, force bool, ev Events) error {
	if refused == nil {
		return nil
	}
	if !force {
		return exit.WithCode(exit.PlanRefused, refused)
	}
	ev.say("Warning: going ahead despite the blocking findings (--force)")
	return nil
}

// changeError gives a failed change its exit code: a rollback that failed
// 5; a wait that timed out (rolled back or not) 124; another writer's
// change since the plan 4; an interruption says what it left; else 1.
func changeError(ctx context.Context, err error) error {
	var ae *AtomicError
	if errors.As(err, &ae) {
		if ae.RollbackErr != nil {
			return exit.WithCode(exit.RollbackFailed, err)
		}
		return waitError(err) // rolled back: a time-out still says 124
	}
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return &stoppedError{err: err}
	}
	var changed *cluster.ChangedError
	if errors.As(err, &changed) {
		return exit.WithCode(exit.PlanChanged, err)
	}
	return waitError(err)
}

// waitError gives a timed-out wait its own exit code.
func waitError(err error) error {
	var te *cluster.WaitTimeoutError
	if errors.As(err, &te) {
		return exit.WithCode(exit.WaitTimedOut, err)
	}
	return err
}

// stoppedError is a change an interruption stopped: what was applied
// stays, and nothing is rolled back.
type stoppedError struct{ err error }

func (e *stoppedError) Error() string {
	msg := "stopped; nothing more is changed, and what the package manager was doing goes on (kubectl xpkg describe shows where it stands)"
	// What the step stopped says of itself (a teardown: its stage and the
	// deletions it sent), unless it says no more than that it was stopped.
	if d := e.err.Error(); d != context.Canceled.Error() {
		msg += ": " + d
	}
	return msg
}

func (e *stoppedError) Unwrap() error { return e.err }
