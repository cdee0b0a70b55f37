package action

import (
	"context"
	"io"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/manifest"
)

// ActivationPlan plans the smallest ManagedResourceActivationPolicy for
// what the cluster needs: the kinds its Compositions (and those in Files)
// compose and the kinds that have objects (pkg/activation).
type ActivationPlan struct {
	cfg *Config
	// Files are more Compositions: files, directories or - (Stdin), read
	// as kubectl -f reads them; Recursive reads subdirectories too.
	Files     []string
	Recursive bool
	Stdin     io.Reader
	// NoClusterCompositions leaves the cluster's own Compositions out:
	// only those in Files are planned for (with the objects there are).
	NoClusterCompositions bool
}

// NewActivationPlan plans for cfg's cluster.
func NewActivationPlan(cfg *Config) *ActivationPlan { return &ActivationPlan{cfg: cfg} }

// Run reads the files first (a bad file fails before any request), then
// the cluster, and plans.
func (a *ActivationPlan) Run(ctx context.Context) (*activation.Plan, error) {
	var fromFiles []composition.Composition
	if len(a.Files) > 0 {
		set, err := manifest.Read(a.Files, manifest.Options{Recursive: a.Recursive, Stdin: a.Stdin})
		if err != nil {
			return nil, err
		}
		fromFiles = set.ReadCompositions()
	}
	c, err := a.cfg.connect()
	if err != nil {
		return nil, err
	}
	in, err := c.ActivationInput(ctx)
	if err != nil {
		return nil, err
	}
	if a.NoClusterCompositions {
		in.Compositions = nil
	}
	in.Compositions = append(in.Compositions, fromFiles...)
	return activation.Build(in), nil
}
