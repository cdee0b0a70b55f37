package exit

// Every exit code of the plugin, in one table; table.go says what each
// means to each verb, for docs/exit-codes.md. Codes mean different things to different verbs
// where the convention they follow says so (diff as diff(1), --wait as
// timeout(1), a signal as a shell reports it).
const (
	// OK: success; validate: every package is valid; diff: no
	// differences.
	OK = 0
	// Error: any failure without a code of its own.
	Error = 1
	// Usage is returned for malformed command lines: unknown verbs or
	// flags, missing or extra arguments.
	Usage = 1

	// ValidateInvalid: validate found an invalid package.
	ValidateInvalid = 1
	// ValidateUnreadable: validate could not read a package.
	ValidateUnreadable = 2

	// DiffSame, DiffDifferent and DiffTrouble are diff(1)'s; DiffBreaking
	// adds breaking changes.
	DiffSame      = 0
	DiffDifferent = 1
	DiffTrouble   = 2
	DiffBreaking  = 3

	// Unread: outdated and upgrade --all could not read some package's
	// registry (the others are reported or upgraded).
	Unread = 1
	// Unanswered: with several contexts (get, outdated, doctor, version),
	// a cluster did not answer (unreachable, forbidden); the others'
	// answers are printed.
	Unanswered = 1

	// PlanRefused: a blocking finding of its plan stopped a change (and
	// would stop it, under --dry-run); diff's code for breaking changes.
	PlanRefused = DiffBreaking
	// DoctorBlocking: doctor found something that takes packages down.
	DoctorBlocking = PlanRefused
	// PlanChanged: the cluster, changed by someone else since the change
	// was planned, stopped it before it was made (planning again is the
	// way on), or while --wait waited.
	PlanChanged = 4
	// RollbackFailed: an --atomic change failed and could not be rolled
	// back; it stands also when an interruption set off the rollback.
	RollbackFailed = 5
	// WaitTimedOut: a --wait ran out of time, as timeout(1) has it.
	WaitTimedOut = 124
	// Signaled is added to the number of the signal that interrupted a
	// verb, as a shell reports a process a signal stopped.
	Signaled = 128
)

// Coder is an error that says its own exit code.
type Coder interface {
	error
	ExitCode() int
}
