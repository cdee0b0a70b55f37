package exit

// Status is one row of the table of exit statuses: the codes, the verbs
// they concern (none: every verb) and what they mean to those verbs, in
// Markdown. docs/exit-codes.md and each command's reference page are
// generated from Table (hack/docgen); a test holds it to codes.go.
type Status struct {
	Codes   []int
	Verbs   []string
	Meaning string
}

// Table is every exit status of the plugin, in the order of its codes.
var Table = []Status{
	{[]int{OK}, nil, "success"},
	{[]int{OK}, []string{"validate"}, "every package is valid"},
	{[]int{DiffSame}, []string{"diff"}, "no differences"},

	{[]int{Error}, nil, "an error without a code of its own"},
	{[]int{Usage}, nil, "a malformed command line: an unknown verb or flag, missing or extra arguments"},
	{[]int{ValidateInvalid}, []string{"validate"}, "some package is invalid"},
	{[]int{DiffDifferent}, []string{"diff"}, "differences, none breaking"},
	{[]int{Error}, []string{"mirror"}, "a package was not mirrored (the others were, and are said; no ImageConfig is printed), or the closure cannot be resolved (a conflict, in the resolver's words)"},
	{[]int{Unread}, []string{"outdated", "upgrade"}, "`outdated`, `upgrade --all`: some package's registry could not be read (the other packages are reported or upgraded)"},
	{[]int{Unread}, []string{"doctor"}, "something it needs could not be read (RBAC, say): the findings it could make are printed, then one error line per read that failed"},
	{[]int{Unanswered}, []string{"get", "outdated", "doctor", "version"}, "across several contexts: a cluster did not answer (`<unreachable>`, `<forbidden>` in its row, one `error: context NAME: …` line each on stderr); the other clusters' answers are printed"},
	{[]int{Error}, []string{"install", "upgrade", "rollback", "uninstall"}, "the API server refused the change (its answer is the message; nothing was changed), or its answer never came (timed out by `--request-timeout`, cut short): the message says `no answer to the change of KIND/NAME … it may have been made` and names the `kubectl xpkg describe` that shows where it stands; or the change was made (stdout's `created`, `upgraded`, `deleted` line says so) and `--wait` ended on a failure: one Crossplane reported, a revision waiting for manual activation, a stuck Lock, a watch RBAC does not allow; an `uninstall --with-dependencies` that stopped before the dependencies names those it left installed"},

	{[]int{ValidateUnreadable}, []string{"validate"}, "some package could not be read"},
	{[]int{DiffTrouble}, []string{"diff"}, "trouble (unreadable package, bad command line)"},

	{[]int{DiffBreaking}, []string{"diff"}, "breaking changes found"},
	{[]int{PlanRefused}, []string{"install", "upgrade", "rollback", "uninstall", "rename"}, "a blocking finding of the plan stopped the change (with `--dry-run`: would stop it); `upgrade --all` and `--family` too"},
	{[]int{PlanRefused}, []string{"plan"}, "a blocking finding in the manifests' plan"},
	{[]int{DoctorBlocking}, []string{"doctor"}, "a blocking finding (something that takes packages down); after `--fix`, one left"},

	{[]int{PlanChanged}, []string{"install", "upgrade", "rollback", "uninstall"}, "someone else changed the cluster under the change: before it was made (another writer moved the package, a package was made again, the plan made again just before deleting found something new: nothing more was changed; plan again), or while `--wait` waited (another writer pointed the package elsewhere: its conditions no longer tell of this change)"},
	{[]int{PlanChanged}, []string{"rename"}, "the package changed since the plan (nothing was changed), or a write of a step found its object changed (the steps before it undone)"},
	{[]int{PlanChanged}, []string{"doctor"}, "`--fix`: an object a repair step changes is not what the repair was planned for any more (another writer changed, made again or deleted it): what was done is said, nothing more was changed"},

	{[]int{RollbackFailed}, []string{"upgrade", "rollback", "rename"}, "`upgrade --atomic`, `rollback --atomic`, `upgrade --family --atomic` (a provider of the family moved before the one that failed could not be put back), `rename` (its undo failed: the message says where it stopped; `kubectl xpkg doctor` shows where the packages stand): the change failed (or was interrupted) and its rollback failed too, after trying again until its budget (the longer of `--wait` and 2 minutes) was spent; the message names both references, where the package points now, and the command that puts it back. It wins over the signal's status"},

	{[]int{WaitTimedOut}, []string{"install", "upgrade", "rollback", "uninstall", "doctor"}, "`--wait` ran out of time (with `--atomic`, after rolling back)"},
	{[]int{WaitTimedOut}, []string{"rename"}, "`--timeout` ran out (after undoing the steps made)"},

	{[]int{Signaled + 2, Signaled + 15, Signaled + 1, Signaled + 3}, nil, "interrupted by SIGINT (Ctrl-C), SIGTERM, SIGHUP (the terminal closed) or SIGQUIT, through kubectl's interrupt handler: the verb stopped, removed what it had half-written (`extract -o FILE` or `-o DIR/` leaves nothing), and said what a change left (a wait stops waiting; what was applied stays, but for `--atomic` and `rename`, which roll back or undo first and say so); a second signal ends it at once"},
}

// For is the rows of Table that concern verb: those of every verb and
// those that name it, in Table's order.
func For(verb string) []Status {
	var rows []Status
	for _, s := range Table {
		if len(s.Verbs) == 0 {
			rows = append(rows, s)
			continue
		}
		for _, v := range s.Verbs {
			if v == verb {
				rows = append(rows, s)
				break
			}
		}
	}
	return rows
}
