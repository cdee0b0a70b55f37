// Package exit turns errors into what a user of the plugin sees: one line that
// names the object and the way out, and an exit code that scripts can rely on.
package exit

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Silent is an error whose message the command has already printed: the
// process only exits with its code.
var Silent = errors.New("")

// CodeError carries the exit code a failure should end the process with.
type CodeError struct {
	Code int
	Err  error
}

func (e *CodeError) Error() string { return e.Err.Error() }
func (e *CodeError) Unwrap() error { return e.Err }

// ExitCode is the code the error carries.
func (e *CodeError) ExitCode() int { return e.Code }

// WithCode attaches an exit code to err; nil stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &CodeError{Code: code, Err: err}
}

// UsageError reports a malformed command line; the hint names the help to read.
type UsageError struct {
	Err  error
	Hint string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Code is the process exit code for err.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return Usage
	}
	return Error
}

// Report is how a command's error ends the process: its message on w as
// one "error: " line (none for Silent, whose message was printed
// already), and the exit code to end with. main calls it, and so do the
// tests that run the commands in-process, so that both see the same.
func Report(w io.Writer, err error) int {
	if err != nil && !errors.Is(err, Silent) {
		fmt.Fprintf(w, "error: %s\n", Message(err))
	}
	return Code(err)
}

// Message renders err for the terminal, without the "error: " prefix. API
// server and registry errors are rewritten into one line with a hint;
// everything else keeps its wrapped context, folded onto one line.
func Message(err error) string {
	if err == nil {
		return ""
	}
	var several Several
	if errors.As(err, &several) && len(several) > 1 {
		lines := make([]string, len(several))
		for i, e := range several {
			lines[i] = Message(e)
		}
		return strings.Join(lines, "\nerror: ")
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		// cobra's suggestions ("Did you mean this?") span lines on purpose.
		msg := strings.TrimRight(ue.Err.Error(), "\n")
		if ue.Hint != "" {
			msg += "\n" + ue.Hint
		}
		return msg
	}
	var worded Worded
	if errors.As(err, &worded) {
		return oneLine(err.Error())
	}
	if msg, ok := apiMessage(err); ok {
		return msg
	}
	if msg, ok := registryMessage(err); ok {
		return msg
	}
	if msg, ok := connectionMessage(err); ok {
		return msg
	}
	return oneLine(err.Error())
}

// Worded is an error whose message says all there is to say: Message
// prints it as it is, not as the API status or connection error it wraps.
type Worded interface {
	error
	Worded()
}

// Several are failures of one command that each get their own "error: "
// line, as kubectl get prints one for each name it does not find.
type Several []error

func (s Several) Error() string { return errors.Join(s...).Error() }

func (s Several) Unwrap() []error { return s }

// oneLine folds a multi-line message so that a script reading stderr sees one
// line per failure.
func oneLine(s string) string {
	fields := strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return strings.Join(fields, "; ")
}

// prefixed keeps the caller's wrapping context ("create provider x: ") in
// front of a rewritten inner message.
func prefixed(err error, inner error, msg string) string {
	full, in := err.Error(), inner.Error()
	if i := strings.Index(full, in); i > 0 && strings.TrimSpace(full[:i]) != "" {
		return oneLine(full[:i]) + " " + msg
	}
	return msg
}

func hint(msg, h string) string {
	return fmt.Sprintf("%s (%s)", msg, h)
}
