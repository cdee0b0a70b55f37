package action

import (
	"fmt"
	"strconv"
)

// RollbackTarget is the package reference to roll back to: the image of
// the revision before the current one, or of the revision toRevision
// names (its name, or its number as kubectl xpkg describe lists it).
// Crossplane keeps the revisions revisionHistoryLimit allows; only those
// can be rolled back to.
func RollbackTarget(in *Installed, toRevision string) (string, error) {
	pkg := in.Package
	cur := in.Current()
	if toRevision != "" {
		n, numErr := strconv.ParseInt(toRevision, 10, 64)
		for _, r := range in.Revisions {
			if r.Name == toRevision || numErr == nil && r.Revision == n {
				if cur != nil && r.Name == cur.Name {
					return "", fmt.Errorf("revision %s is the current revision of %s: nothing to roll back to", r.Name, pkg.KindName())
				}
				if r.Image == "" {
					return "", fmt.Errorf("revision %s of %s names no image", r.Name, pkg.KindName())
				}
				return r.Image, nil
			}
		}
		return "", fmt.Errorf("%s has no revision %q: kubectl xpkg describe %s lists the %d it keeps", pkg.KindName(), toRevision, pkg.KindName(), len(in.Revisions))
	}
	if cur == nil {
		return "", fmt.Errorf("%s has no current revision yet: nothing to roll back from", pkg.KindName())
	}
	// The package points at an image that has no revision of its own (one
	// Crossplane could not unpack: it keeps the revision it had): back
	// to what still runs.
	if cur.Image != "" && pkg.Source != cur.Image {
		return cur.Image, nil
	}
	// Revisions are newest first: the first older one with another image.
	for _, r := range in.Revisions {
		if r.Revision < cur.Revision && r.Image != "" && r.Image != cur.Image {
			return r.Image, nil
		}
	}
	return "", fmt.Errorf("%s keeps no revision older than %s (its revisionHistoryLimit drops them): go back with kubectl xpkg upgrade %s VERSION",
		pkg.KindName(), cur.Name, pkg.KindName())
}
