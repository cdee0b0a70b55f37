//go:build unix

package extract

import (
	"errors"
	"syscall"
)

// processRunning reports whether a process with that ID exists (signal 0
// checks without sending anything; EPERM: it exists, someone else's).
func processRunning(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
