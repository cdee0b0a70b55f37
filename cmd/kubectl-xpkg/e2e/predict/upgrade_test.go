package predict

import "testing"

// TestUpgradeDependency: A v1.0.0 needs D <=v0.1.0, so the resolver
// installs D v0.1.0; A v2.0.0 needs D >=v0.2.0, which D has at v0.2.0 and
// v0.3.0. With upgrades the resolver moves D to the lowest version at or
// above the running one that A admits, v0.2.0; without, D stays and A's
// new revision cannot be healthy.
func TestUpgradeDependency(t *testing.T) {
	s := begin(t)
	a, d := s.repo("up-a"), s.repo("up-d")
	s.pushTags(t, d, []string{"v0.1.0", "v0.2.0", "v0.3.0"})
	s.push(t, a, "v1.0.0", needs(d, "<=v0.1.0"))
	s.push(t, a, "v2.0.0", needs(d, ">=v0.2.0"))
	dName := dependency("up-d")

	s.run(t, step{
		name:      "install",
		manifests: []manifest{configuration("predict-up-a", a+":v1.0.0")},
		changes:   []change{{dName, "install", "v0.1.0"}},
		want:      settled(true, pkg{"configuration/predict-up-a", "v1.0.0", healthy}, pkg{dName, "v0.1.0", healthy}),
	})

	next := step{name: "upgrade A past D", manifests: []manifest{configuration("predict-up-a", a+":v2.0.0")}}
	if s.mode.upgrades {
		next.changes = []change{{dName, "upgrade", "v0.2.0"}}
		next.want = settled(true, pkg{"configuration/predict-up-a", "v2.0.0", healthy}, pkg{dName, "v0.2.0", healthy})
	} else {
		next.want = settled(true, pkg{"configuration/predict-up-a", "v2.0.0", unhealthy}, pkg{dName, "v0.1.0", healthy})
	}
	s.run(t, next)
}

// TestDowngradeDependency: A v1.0.0 needs D >=v0.3.0, so D runs v0.3.0;
// A v2.0.0 needs D <v0.2.0, which D has at v0.1.0 and v0.1.5. With
// downgrades the resolver moves D to the highest version below the
// running one that A admits, v0.1.5; with upgrades alone it finds no
// version at or above the running one and the Lock stalls; without
// either D stays. Either way but the first, A cannot be healthy.
func TestDowngradeDependency(t *testing.T) {
	s := begin(t)
	a, d := s.repo("down-a"), s.repo("down-d")
	s.pushTags(t, d, []string{"v0.1.0", "v0.1.5", "v0.2.0", "v0.3.0"})
	s.push(t, a, "v1.0.0", needs(d, ">=v0.3.0"))
	s.push(t, a, "v2.0.0", needs(d, "<v0.2.0"))
	dName := dependency("down-d")

	s.run(t, step{
		name:      "install",
		manifests: []manifest{configuration("predict-down-a", a+":v1.0.0")},
		changes:   []change{{dName, "install", "v0.3.0"}},
		want:      settled(true, pkg{"configuration/predict-down-a", "v1.0.0", healthy}, pkg{dName, "v0.3.0", healthy}),
	})

	next := step{name: "move A below D", manifests: []manifest{configuration("predict-down-a", a+":v2.0.0")}}
	switch {
	case s.mode.downgrades:
		next.changes = []change{{dName, "downgrade", "v0.1.5"}}
		next.want = settled(true, pkg{"configuration/predict-down-a", "v2.0.0", healthy}, pkg{dName, "v0.1.5", healthy})
	case s.mode.upgrades:
		next.stall = d
		next.want = settled(false, pkg{"configuration/predict-down-a", "v2.0.0", unhealthy}, pkg{dName, "v0.3.0", healthy})
	default:
		next.want = settled(true, pkg{"configuration/predict-down-a", "v2.0.0", unhealthy}, pkg{dName, "v0.3.0", healthy})
	}
	s.run(t, next)
}

// TestUpgradeCustomNamedDependency: D is installed by hand under a name
// of its own (custom-d, v0.1.0), then a new configuration needs D
// >=v0.2.0. The resolver finds D by its repository, whatever its name:
// with upgrades it moves custom-d to v0.2.0 and installs no second D;
// without, custom-d stays and the configuration cannot be healthy.
func TestUpgradeCustomNamedDependency(t *testing.T) {
	s := begin(t)
	a, d := s.repo("cn-a"), s.repo("cn-d")
	s.pushTags(t, d, []string{"v0.1.0", "v0.2.0", "v0.3.0"})
	s.push(t, a, "v1.0.0", needs(d, ">=v0.2.0"))

	s.run(t, step{
		name:      "install D by hand",
		manifests: []manifest{configuration("custom-d", d+":v0.1.0")},
		want:      settled(true, pkg{"configuration/custom-d", "v0.1.0", healthy}),
	})

	next := step{name: "install a dependent of D", manifests: []manifest{configuration("predict-cn-a", a+":v1.0.0")}}
	if s.mode.upgrades {
		next.changes = []change{{"configuration/custom-d", "upgrade", "v0.2.0"}}
		next.want = settled(true, pkg{"configuration/predict-cn-a", "v1.0.0", healthy}, pkg{"configuration/custom-d", "v0.2.0", healthy})
	} else {
		next.want = settled(true, pkg{"configuration/predict-cn-a", "v1.0.0", unhealthy}, pkg{"configuration/custom-d", "v0.1.0", healthy})
	}
	s.run(t, next)
}
