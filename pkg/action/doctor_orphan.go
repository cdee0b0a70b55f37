package action

import "k8s.io/apimachinery/pkg/runtime/schema"

// orphanRef is a definition's controller reference to a revision that no
// longer exists.
type orphanRef struct {
	Resource                  schema.GroupVersionResource
	Name, OwnerUID, OwnerName string
}

func (s *state) orphanSteps() []RepairStep { return nil }
