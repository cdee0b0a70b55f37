package predict

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// planDoc is what these tests read of `kubectl xpkg plan -f DIR -o json`:
// the Crossplane the plan judged by, and what its resolver will do with
// the manifests applied. Everything the tests know of the plan's JSON is
// here.
type planDoc struct {
	Manifests  int            `json:"manifests"`
	Crossplane *crossplaneDoc `json:"crossplane"`
	Resolution *resolutionDoc `json:"resolution"`
}

// crossplaneDoc is the running Crossplane as the plan read it.
type crossplaneDoc struct {
	Version              string `json:"version"`
	DependencyUpgrades   bool   `json:"dependencyUpgrades"`
	DependencyDowngrades bool   `json:"dependencyDowngrades"`
	// Read is where the plan learnt it: "deployment", "assumed", "unknown".
	Read string `json:"read"`
}

// resolutionDoc is what the resolver will do: the packages it installs or
// moves, whether the Lock resolves (where it stalls when not), and the
// packages left unhealthy.
type resolutionDoc struct {
	Changes   []changeDoc                           `json:"changes"`
	Resolves  bool                                  `json:"resolves"`
	Stall     *struct{ Repository, Message string } `json:"stall"`
	Unhealthy []struct{ Package, Message string }   `json:"unhealthy"`
}

// changeDoc is one package the resolver installs or moves: Package is
// kind/name ("configuration/e2e-predict-d", the name the resolver gives a
// package it installs), To a tag or a digest.
type changeDoc struct {
	Package     string `json:"package"`
	Repository  string `json:"repository"`
	Action      string `json:"action"`
	From        string `json:"from"`
	To          string `json:"to"`
	Reason      string `json:"reason"`
	Constraints []struct {
		By         string `json:"by"`
		Constraint string `json:"constraint"`
	} `json:"constraints"`
}

// decodePlan reads a plan's JSON (the caller logs it); a plan without a Crossplane or a
// resolution predicts nothing, and is an error.
func decodePlan(r *clitest.Result) (*planDoc, error) {
	var p planDoc
	if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
		return nil, fmt.Errorf("plan -o json (exit %d): %w", r.ExitCode, err)
	}
	var missing []string
	if p.Crossplane == nil {
		missing = append(missing, `"crossplane"`)
	}
	if p.Resolution == nil {
		missing = append(missing, `"resolution"`)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("plan -o json (exit %d) has no %s", r.ExitCode, strings.Join(missing, " or "))
	}
	return &p, nil
}

// predict is the state the plan foretells: the current one, with the
// manifests' packages at their references, the resolver's changes made,
// every package healthy but those the plan lists unhealthy, and the Lock
// resolved as the plan says.
func (p *planDoc) predict(current state, manifests []manifest) state {
	next := state{Packages: map[string]pkgState{}, Resolved: "False"}
	if p.Resolution.Resolves {
		next.Resolved = "True"
	}
	for k, v := range current.Packages {
		next.Packages[k] = pkgState{Version: v.Version}
	}
	for _, m := range manifests {
		next.Packages[m.key()] = pkgState{Version: version(m.ref)}
	}
	for _, c := range p.Resolution.Changes {
		next.Packages[c.Package] = pkgState{Version: c.To}
	}
	for k, v := range next.Packages {
		v.Healthy = !slices.ContainsFunc(p.Resolution.Unhealthy, func(u struct{ Package, Message string }) bool { return u.Package == k })
		next.Packages[k] = v
	}
	return next
}

// change is a move of the resolver a step expects the plan to name.
type change struct{ pkg, action, to string }

func (c change) String() string { return c.action + " " + c.pkg + " to " + c.to }

// checkResolution compares the plan's resolver changes (but those of the
// manifests' own packages) and its stall with a step's, and says how they
// differ.
func (p *planDoc) checkResolution(st step) error {
	var got []string
	for _, c := range p.Resolution.Changes {
		if !slices.ContainsFunc(st.manifests, func(m manifest) bool { return m.key() == c.Package }) {
			got = append(got, change{c.Package, c.Action, c.To}.String())
		}
	}
	var want []string
	for _, c := range st.changes {
		want = append(want, c.String())
	}
	slices.Sort(got)
	slices.Sort(want)
	var errs []error
	if !slices.Equal(got, want) {
		errs = append(errs, fmt.Errorf("the resolver's changes: want %q, the plan says %q", want, got))
	}
	switch r := p.Resolution; {
	case st.stall == "" && !r.Resolves:
		errs = append(errs, fmt.Errorf("the plan says the Lock stalls (%+v), want it resolved", r.Stall))
	case st.stall != "" && r.Resolves:
		errs = append(errs, fmt.Errorf("the plan says the Lock resolves, want it stalled on %s", st.stall))
	case st.stall != "" && (r.Stall == nil || r.Stall.Repository != st.stall):
		errs = append(errs, fmt.Errorf("the plan says the Lock stalls on %+v, want %s", r.Stall, st.stall))
	}
	return errors.Join(errs...)
}

// checkCrossplane compares the Crossplane the plan judged by with the one
// running: its release, and its flags, read from the Deployment.
func (p *planDoc) checkCrossplane(version string, m mode) error {
	got := *p.Crossplane
	want := crossplaneDoc{Version: version, DependencyUpgrades: m.upgrades, DependencyDowngrades: m.downgrades, Read: "deployment"}
	if got != want {
		return fmt.Errorf("the plan judged by Crossplane %+v, want %+v", got, want)
	}
	return nil
}
