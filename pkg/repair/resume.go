package repair

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// maxBackup bounds the backup file read back: far above any real one.
const maxBackup = 256 << 20

// Resume plans the rest of a repair cut short after it removed the
// finalizers of objects a definition's deletion held (op is its record on
// the Lock, which names the backup): each object of the backup whose kind
// is a CRD's and that is missing now is made again, once the package
// manager has made its CRD again. The steps go before the record's
// removal; none when the record is of another repair. What keeps it from
// being planned (the backup unreadable, a kind no longer served) is
// returned as Left.
func Resume(ctx context.Context, c *cluster.Cluster, mapper func() (meta.RESTMapper, error), op *installed.Operation) (steps []diagnose.RepairStep, left []string, err error) {
	if op == nil || !diagnose.HeldRecord(op) {
		return nil, nil, nil
	}
	if op.Backup == "" {
		return nil, []string{"the repair cut short named no backup: make its objects again from the file it said it saved them to (kubectl apply -f FILE)"}, nil
	}
	objs, err := readBackup(op.Backup)
	if err != nil {
		return nil, []string{fmt.Sprintf("the backup %s of the repair cut short cannot be read here (%v): run kubectl xpkg doctor --fix where it was written, or make its objects again with kubectl apply -f", op.Backup, err)}, nil
	}
	m, err := mapper()
	if err != nil {
		return nil, nil, err
	}
	awaited := map[string]bool{}
	var recreate []diagnose.RepairStep
	for _, u := range objs {
		gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
		if err != nil || isPackageObject(gv.Group) {
			continue
		}
		mapping, err := m.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: u.GetKind()}, gv.Version)
		if err != nil {
			left = append(left, fmt.Sprintf("%s %s from the backup %s: its kind is not served (%v); it is made again once its CRD is", u.GetKind(), u.GetName(), op.Backup, err))
			continue
		}
		crdName := mapping.Resource.Resource + "." + gv.Group
		crd := &cluster.CRD{Name: crdName, Group: gv.Group, Plural: mapping.Resource.Resource, Kind: u.GetKind(), Served: []string{gv.Version}, Storage: gv.Version}
		now, err := c.GetObject(ctx, crd, u.GetNamespace(), u.GetName())
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", diagnose.HeldName(crd, u), err)
		}
		if now != nil {
			continue
		}
		h := diagnose.Held{CRD: crd, Object: u}
		if !awaited[crdName] {
			awaited[crdName] = true
			steps = append(steps, diagnose.RepairStep{Rule: findings.RuleUnfinishedOperation, Action: diagnose.RepairAwaitDefinition, Object: "customresourcedefinition/" + crdName, Held: &diagnose.Held{CRD: crd},
				Message: fmt.Sprintf("wait until the package manager has made CRD %s again (the repair %s was cut short after removing the finalizers of its objects)", crdName, op.ID)})
		}
		recreate = append(recreate, diagnose.RepairStep{Rule: findings.RuleUnfinishedOperation, Action: diagnose.RepairRecreate, Object: diagnose.HeldName(crd, u), Held: &h,
			Message: fmt.Sprintf("make %s %s again from the backup %s, with external name %s", u.GetKind(), diagnose.HeldName(crd, u), op.Backup, diagnose.ExternalName(u))})
	}
	return append(steps, recreate...), left, nil
}

// isPackageObject: the group of the package manager's own objects and of
// definitions, which a backup holds for the other repairs.
func isPackageObject(group string) bool {
	return strings.HasPrefix(group, "pkg.") || group == "apiextensions.k8s.io" || group == "apiextensions.crossplane.io"
}

// readBackup reads the objects of a backup file as writeBackup wrote
// them: YAML documents.
func readBackup(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(io.LimitReader(f, maxBackup), 64<<10)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}
