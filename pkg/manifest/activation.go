package manifest

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// ReadCompositions is what each of the set's Compositions composes, each
// named with where it was read.
func (s *Set) ReadCompositions() []composition.Composition {
	out := make([]composition.Composition, 0, len(s.Compositions))
	for _, o := range s.Compositions {
		out = append(out, composition.Read(o.Object, o.Where()))
	}
	return out
}

// ActivationPolicies are the set's ManagedResourceActivationPolicies.
func (s *Set) ActivationPolicies() []installed.MRAP {
	out := make([]installed.MRAP, 0, len(s.Policies))
	for _, o := range s.Policies {
		activate, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "activate")
		out = append(out, installed.MRAP{Name: o.GetName(), Activate: activate})
	}
	return out
}
