package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// The plan -f benchmark's inputs: the packages the upgraded providers run
// and move to, pushed to the local registry, and the directories of
// manifests, one file per package.

const (
	// planFilesCRDsEach is how many CRDs each provider installs (and each
	// pushed package defines).
	planFilesCRDsEach = 2
	planFilesSet      = "planf"
	// planFilesFrom is the revision number every provider runs (doctor's
	// population: v1.5.0); an upgrade moves to the next, v1.6.0.
	planFilesFrom = doctorRevisions
	planFilesTo   = doctorRevisions + 1
	// planFilesLimit is the revisionHistoryLimit a spec edit sets (the
	// population's is doctorHistoryLimit).
	planFilesLimit = doctorHistoryLimit + 2
)

// planFilesSize is a size: packages in the cluster, each named by one
// manifest, of which upgrades move spec.package to the next version and
// edits change spec.revisionHistoryLimit.
type planFilesSize struct{ packages, upgrades, edits int }

var planFilesSizes = []planFilesSize{{packages: 50, upgrades: 5, edits: 5}, {packages: 200, upgrades: 10, edits: 10}}

// planFilesVariant is one set of manifests of a size: every package
// unchanged, only the edits, or the upgrades and the edits.
type planFilesVariant struct {
	name            string
	upgrades, edits int
}

func (s planFilesSize) variants() []planFilesVariant {
	return []planFilesVariant{{"unchanged", 0, 0}, {"edits", 0, s.edits}, {"upgrades+edits", s.upgrades, s.edits}}
}

func (s planFilesSize) String() string { return fmt.Sprintf("%d packages", s.packages) }

// stride spreads the changed packages over the size: provider i*stride
// is upgraded, i*stride+1 edited.
func (s planFilesSize) stride() int { return s.packages / max(s.upgrades, s.edits, 1) }

// change is what variant v's manifest does to provider i: "upgrade",
// "edit" or "".
func (s planFilesSize) change(v planFilesVariant, i int) string {
	k, at := i/s.stride(), i%s.stride()
	switch {
	case at == 0 && k < v.upgrades:
		return "upgrade"
	case at == 1 && k < v.edits:
		return "edit"
	}
	return ""
}

// upgraded are the providers some size upgrades, whose repositories
// hold real packages.
func upgraded() []int {
	seen := map[int]bool{}
	var out []int
	for _, s := range planFilesSizes {
		for i := range s.packages {
			if s.change(s.variants()[2], i) == "upgrade" && !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}

// pushPackages pushes v1.5.0 and v1.6.0 of each upgraded provider to
// registry (directly, not through the counter): its meta object and its
// CRDs, v1.6.0's with v2's changed descriptions.
func (dc *doctorCluster) pushPackages(ctx context.Context, registry string, auth remote.Option) error {
	for _, i := range upgraded() {
		p := &doctorPkg{i: i, shape: &dc.shape}
		for _, n := range []int{planFilesFrom, planFilesTo} {
			var b bytes.Buffer
			fmt.Fprintf(&b, "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-%s-%03d\n", dc.shape.prefix, i)
			for j := range dc.shape.crdsEach {
				c := dc.crd(i*dc.shape.crdsEach+j, n == planFilesTo)
				b.WriteString("---\n")
				b.Write(c.rename(c.v.yaml))
			}
			img, err := fixture.Image(b.Bytes())
			if err != nil {
				return err
			}
			ref := fmt.Sprintf("%s/bench/provider-%s-%03d:v1.%d.0", registry, dc.shape.prefix, i, n)
			if err := fixture.Push(ref, img, auth, remote.WithContext(ctx)); err != nil {
				return fmt.Errorf("push %s (for %s): %w", ref, p.name(), err)
			}
		}
	}
	return nil
}

// writeManifests writes variant v's manifests of the size in dir, one
// file a package.
func (dc *doctorCluster) writeManifests(dir string, s planFilesSize, v planFilesVariant) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range s.packages {
		p := &doctorPkg{i: i, shape: &dc.shape}
		ref, limit := p.image(planFilesFrom), doctorHistoryLimit
		switch s.change(v, i) {
		case "upgrade":
			ref = p.image(planFilesTo)
		case "edit":
			limit = planFilesLimit
		}
		m := fmt.Sprintf("apiVersion: pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: %s\nspec:\n  package: %s\n  revisionHistoryLimit: %d\n", p.name(), ref, limit)
		if err := os.WriteFile(filepath.Join(dir, p.name()+".yaml"), []byte(m), 0o644); err != nil {
			return err
		}
	}
	return nil
}
