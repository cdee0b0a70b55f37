package exit

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/readme"
)

// TestREADMEListsEveryCode: the README's table of exit codes has a row
// for every code of codes.go, and no code the table does not define.
func TestREADMEListsEveryCode(t *testing.T) {
	table := readme.Table(t, "| code | meaning |")
	var listed []int
	for _, m := range regexp.MustCompile(`(?m)^\| ([0-9, ]+) \|`).FindAllStringSubmatch(table, -1) {
		for f := range strings.SplitSeq(m[1], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("README's exit code %q: %v", f, err)
			}
			listed = append(listed, n)
		}
	}
	codes := []int{OK, Error, Usage, ValidateInvalid, ValidateUnreadable, DiffSame, DiffDifferent, DiffTrouble, DiffBreaking,
		Unread, Unanswered, PlanRefused, DoctorBlocking, PlanChanged, RollbackFailed, WaitTimedOut}
	for _, c := range codes {
		if !slices.Contains(listed, c) {
			t.Errorf("README's exit codes do not list %d", c)
		}
	}
	for _, c := range listed {
		if !slices.Contains(codes, c) && c <= Signaled {
			t.Errorf("README lists exit code %d, which codes.go does not define", c)
		}
	}
	if !slices.ContainsFunc(listed, func(c int) bool { return c > Signaled }) {
		t.Error("README lists no status of an interrupted verb (Signaled + the signal)")
	}
}
