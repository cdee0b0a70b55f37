package predict

import "testing"

// TestSharedTransitive is Crossplane's own SharedTransitive scenario: A
// needs D1 and B needs D2 (each at its own version), and D1 and D2 both
// need T at their own version. Moving A alone to v0.0.2 asks for D1
// v0.0.2, which needs T v0.0.2, while D2 v0.0.1 still needs T v0.0.1:
// with upgrades the resolver moves D1 and then stalls on T; without, D1
// stays and A cannot be healthy. Moving B too, both manifests in one
// plan, lets the resolver move D2 and T: every package is healthy again.
// Without upgrades nothing moves, and A and B wait.
func TestSharedTransitive(t *testing.T) {
	s := begin(t)
	a, b, d1, d2, tr := s.repo("st-a"), s.repo("st-b"), s.repo("st-d1"), s.repo("st-d2"), s.repo("st-t")
	versions := []string{"v0.0.1", "v0.0.2"}
	for _, v := range versions {
		s.push(t, tr, v)
		s.push(t, d1, v, needs(tr, v))
		s.push(t, d2, v, needs(tr, v))
		s.push(t, a, v, needs(d1, v))
		s.push(t, b, v, needs(d2, v))
	}
	d1Name, d2Name, tName := dependency("st-d1"), dependency("st-d2"), dependency("st-t")
	const aName, bName = "configuration/predict-st-a", "configuration/predict-st-b"

	s.run(t, step{
		name:      "install A and B",
		manifests: []manifest{configuration("predict-st-a", a+":v0.0.1"), configuration("predict-st-b", b+":v0.0.1")},
		changes:   []change{{d1Name, "install", "v0.0.1"}, {d2Name, "install", "v0.0.1"}, {tName, "install", "v0.0.1"}},
		want: settled(true, pkg{aName, "v0.0.1", healthy}, pkg{bName, "v0.0.1", healthy},
			pkg{d1Name, "v0.0.1", healthy}, pkg{d2Name, "v0.0.1", healthy}, pkg{tName, "v0.0.1", healthy}),
	})

	alone := step{name: "move A alone", manifests: []manifest{configuration("predict-st-a", a+":v0.0.2")}}
	if s.mode.upgrades {
		alone.changes = []change{{d1Name, "upgrade", "v0.0.2"}}
		alone.stall = tr
		alone.want = settled(false, pkg{aName, "v0.0.2", healthy}, pkg{bName, "v0.0.1", healthy},
			pkg{d1Name, "v0.0.2", unhealthy}, pkg{d2Name, "v0.0.1", healthy}, pkg{tName, "v0.0.1", healthy})
	} else {
		alone.want = settled(true, pkg{aName, "v0.0.2", unhealthy}, pkg{bName, "v0.0.1", healthy},
			pkg{d1Name, "v0.0.1", healthy}, pkg{d2Name, "v0.0.1", healthy}, pkg{tName, "v0.0.1", healthy})
	}
	s.run(t, alone)

	both := step{name: "move B too", manifests: []manifest{configuration("predict-st-a", a+":v0.0.2"), configuration("predict-st-b", b+":v0.0.2")}}
	if s.mode.upgrades {
		both.changes = []change{{d2Name, "upgrade", "v0.0.2"}, {tName, "upgrade", "v0.0.2"}}
		both.want = settled(true, pkg{aName, "v0.0.2", healthy}, pkg{bName, "v0.0.2", healthy},
			pkg{d1Name, "v0.0.2", healthy}, pkg{d2Name, "v0.0.2", healthy}, pkg{tName, "v0.0.2", healthy})
	} else {
		both.want = settled(true, pkg{aName, "v0.0.2", unhealthy}, pkg{bName, "v0.0.2", unhealthy},
			pkg{d1Name, "v0.0.1", healthy}, pkg{d2Name, "v0.0.1", healthy}, pkg{tName, "v0.0.1", healthy})
	}
	s.run(t, both)
}
