package predict

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// A plan in the shape these tests read: A moves to v2.0.0, the resolver
// moves D to v0.2.0 and leaves B unhealthy, and the Lock resolves.
const samplePlan = `{"manifests": 1, "plans": [],
 "crossplane": {"version": "v2.4.2", "dependencyUpgrades": true, "dependencyDowngrades": false, "read": "deployment"},
 "resolution": {"changes": [
   {"package": "configuration/e2e-predict-d", "repository": "host/e2e/predict/d", "action": "upgrade", "from": "v0.1.0", "to": "v0.2.0",
    "reason": "a", "constraints": [{"by": "configuration/a", "constraint": ">=v0.2.0"}]}],
  "resolves": true, "unhealthy": [{"package": "configuration/b", "message": "b"}]}}`

// TestPlanPrediction: the state a plan predicts is the current one with
// the manifests' packages and the resolver's changes made, healthy but
// what it lists unhealthy; its resolution and Crossplane are held to a
// step's, and a plan that predicts nothing is an error.
func TestPlanPrediction(t *testing.T) {
	p, err := decodePlan(&clitest.Result{Stdout: samplePlan})
	if err != nil {
		t.Fatal(err)
	}
	current := settled(true,
		pkg{"configuration/a", "v1.0.0", healthy}, pkg{"configuration/b", "v1.0.0", healthy},
		pkg{"configuration/e2e-predict-d", "v0.1.0", healthy})
	a := []manifest{configuration("a", "host/e2e/predict/a:v2.0.0")}
	want := settled(true,
		pkg{"configuration/a", "v2.0.0", healthy}, pkg{"configuration/b", "v1.0.0", unhealthy},
		pkg{"configuration/e2e-predict-d", "v0.2.0", healthy})
	if d := diff(want, p.predict(current, a)); d != "" {
		t.Errorf("predicted:\n%s", d)
	}

	st := step{manifests: a, changes: []change{{"configuration/e2e-predict-d", "upgrade", "v0.2.0"}}}
	if err := p.checkResolution(st); err != nil {
		t.Error(err)
	}
	st.changes[0].to = "v0.3.0"
	if err := p.checkResolution(st); err == nil || !strings.Contains(err.Error(), "v0.3.0") {
		t.Errorf("another change passes: %v", err)
	}
	st.changes[0].to, st.stall = "v0.2.0", "host/e2e/predict/d"
	if err := p.checkResolution(st); err == nil {
		t.Error("a plan that resolves passes for a step that stalls")
	}
	if err := p.checkCrossplane("v2.4.2", mode{upgrades: true}); err != nil {
		t.Error(err)
	}
	if err := p.checkCrossplane("v2.4.2", mode{}); err == nil {
		t.Error("a plan that read the upgrade flag passes for a Crossplane without it")
	}

	if _, err := decodePlan(&clitest.Result{Stdout: `{"manifests": 1, "plans": []}`}); err == nil {
		t.Error("a plan without a resolution is read as a prediction")
	}
}
