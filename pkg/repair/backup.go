package repair

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
)

// Backup is every object the repair changes or deletes, as it is now,
// as kubectl apply -f takes it back: the package manager's objects
// without their status (it writes that again), the objects a deletion
// holds whole, status and all, as they were read when the repair was
// planned.
func Backup(ctx context.Context, c *cluster.Cluster, steps []diagnose.RepairStep) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, st := range steps {
		if seen[st.Object] {
			continue
		}
		seen[st.Object] = true
		u, err := backupObject(ctx, c, st)
		if err != nil {
			return nil, err
		}
		if u != nil {
			objs = append(objs, u)
		}
	}
	return objs, nil
}

func backupObject(ctx context.Context, c *cluster.Cluster, st diagnose.RepairStep) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	var err error
	switch st.Action {
	case diagnose.RepairDelete:
		u, err = c.Revision(ctx, st.Revision.Kind, st.Revision.Name)
	case diagnose.RepairRemoveLockEntry, diagnose.RepairRemoveRecord:
		u, err = c.LockObject(ctx)
	case diagnose.RepairRemoveOwnerRef:
		u, err = c.DefinitionObject(ctx, st.Owner.Resource, st.Owner.Name)
	case diagnose.RepairRemoveFinalizer, diagnose.RepairRecreate:
		return Whole(st.Held.Object), nil
	case diagnose.RepairAwaitDefinition:
		return nil, nil // changes nothing
	default:
		return nil, fmt.Errorf("unknown repair %s", st.Action)
	}
	if err != nil || u == nil {
		return nil, err
	}
	u = Whole(u)
	delete(u.Object, "status")
	return u, nil
}
