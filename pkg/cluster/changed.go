package cluster

import (
	"fmt"
	"strings"
)

// ChangedError is the one error for a change that someone else's change
// to the cluster stopped (exit status 4): the only policy there is for
// it. A change is planned against what it reads; what it acts on must
// still be that when it acts, or it stops, says what changed, and
// planning again is the way on. It arises where the difference is seen:
//
//   - SetPackage: the package's reference (a JSON-patch test), its spec's
//     generation or its identity (deleted and made again) is not what was
//     planned for (Planned, Now, Generations, Replaced);
//   - a plan made again just before acting (uninstall's before each
//     deletion, each step of upgrade --all) finds what the approved plan
//     did not have (Action, What, Done);
//   - a wait following the change sees the package pointed elsewhere: its
//     conditions no longer tell of this change (Waiting).
type ChangedError struct {
	Package string
	// Planned is the reference the change was planned for (or set, for a
	// wait); Now where the package points.
	Planned, Now string
	// Replaced: deleted and made again, pointing where it did.
	Replaced bool
	// Generations: the spec's generation planned for and now, when another
	// field of the spec changed.
	Generations [2]int64
	// Action and What: the verb whose plan, made again, found What (in
	// words); Done is what the change had done before it stopped.
	Action, What string
	Done         []string
	// Waiting: the package was pointed elsewhere while the change was
	// waited for (the change itself was made).
	Waiting bool
}

func (e *ChangedError) Error() string {
	switch {
	case e.What != "":
		done := "nothing was changed"
		if len(e.Done) > 0 {
			done = strings.Join(e.Done, ", ") + " went; nothing more was changed"
		}
		return fmt.Sprintf("the %s of %s stopped: %s since it was planned; %s: plan again", e.Action, e.Package, e.What, done)
	case e.Waiting:
		return fmt.Sprintf("%s now points at %s, not at %s: someone else changed it while waiting, so its conditions no longer tell of this change; see kubectl xpkg describe %s", e.Package, e.Now, e.Planned, e.Package)
	case e.Replaced:
		return fmt.Sprintf("%s was deleted and made again since the change was planned: someone else changed it; nothing was changed, plan again", e.Package)
	case e.Generations[0] != 0:
		return fmt.Sprintf("%s's spec changed since the change was planned (generation %d, now %d): someone else changed it; nothing was changed, plan again", e.Package, e.Generations[0], e.Generations[1])
	}
	return fmt.Sprintf("%s now points at %s, not at %s as when the change was planned: someone else changed it; nothing was changed, plan again", e.Package, e.Now, e.Planned)
}

// Landed tells whether the error is SetPackage finding the package
// pointing at ref already, and nothing else changed: an earlier try of
// the same change whose answer never came landed after all.
func (e *ChangedError) Landed(ref string) bool {
	return e.What == "" && !e.Waiting && !e.Replaced && e.Generations[0] == 0 && e.Now == ref
}
