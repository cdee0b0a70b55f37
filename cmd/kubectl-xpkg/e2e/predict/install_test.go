package predict

import "testing"

// TestInstallNewest: a new configuration needs D >=v0.1.0, which the
// registry has at v0.1.0, v0.2.0 and v0.2.5, besides "v1" (an incomplete
// version the resolver skips, though it would sort first as v1.0.0) and
// "latest" (no version). The resolver installs D at v0.2.5 under its own
// name, then D's own dependency T at the newest version D admits. In
// every mode: nothing is installed yet, so there is nothing to move.
func TestInstallNewest(t *testing.T) {
	s := begin(t)
	a, d, tr := s.repo("in-a"), s.repo("in-d"), s.repo("in-t")
	s.pushTags(t, tr, []string{"v0.1.0", "v0.3.0", "v1.0.0"})
	s.pushTags(t, d, []string{"v0.1.0", "v0.2.0", "v0.2.5", "v1", "latest"}, needs(tr, ">=v0.1.0, <v1.0.0"))
	s.push(t, a, "v1.0.0", needs(d, ">=v0.1.0"))
	dName, tName := dependency("in-d"), dependency("in-t")

	s.run(t, step{
		name:      "install",
		manifests: []manifest{configuration("predict-in-a", a+":v1.0.0")},
		changes:   []change{{dName, "install", "v0.2.5"}, {tName, "install", "v0.3.0"}},
		want: settled(true,
			pkg{"configuration/predict-in-a", "v1.0.0", healthy},
			pkg{dName, "v0.2.5", healthy},
			pkg{tName, "v0.3.0", healthy}),
	})
}

// TestDependencyByDigest: a configuration needs D at a digest (D v0.1.0's
// image); the resolver installs D by that digest. Its next version needs
// another digest (D v0.2.0's): with upgrades the resolver moves D to it;
// without, D stays and the configuration cannot be healthy.
func TestDependencyByDigest(t *testing.T) {
	s := begin(t)
	a, d := s.repo("dg-a"), s.repo("dg-d")
	first, second := s.push(t, d, "v0.1.0"), s.push(t, d, "v0.2.0")
	s.push(t, a, "v1.0.0", needs(d, first))
	s.push(t, a, "v2.0.0", needs(d, second))
	dName := dependency("dg-d")

	s.run(t, step{
		name:      "install",
		manifests: []manifest{configuration("predict-dg-a", a+":v1.0.0")},
		changes:   []change{{dName, "install", first}},
		want:      settled(true, pkg{"configuration/predict-dg-a", "v1.0.0", healthy}, pkg{dName, first, healthy}),
	})

	next := step{name: "upgrade to a configuration pinning another digest", manifests: []manifest{configuration("predict-dg-a", a+":v2.0.0")}}
	if s.mode.upgrades {
		next.changes = []change{{dName, "upgrade", second}}
		next.want = settled(true, pkg{"configuration/predict-dg-a", "v2.0.0", healthy}, pkg{dName, second, healthy})
	} else {
		next.want = settled(true, pkg{"configuration/predict-dg-a", "v2.0.0", unhealthy}, pkg{dName, first, healthy})
	}
	s.run(t, next)
}

// TestNoValidVersion: a new configuration needs D >=v1.0.0, above every
// tag D has. The plan blocks (exit 3); applied anyway, the resolver finds
// no version to install and the Lock stalls, in every mode, and the
// configuration cannot be healthy.
func TestNoValidVersion(t *testing.T) {
	s := begin(t)
	a, d := s.repo("nv-a"), s.repo("nv-d")
	s.pushTags(t, d, []string{"v0.1.0", "v0.2.0"})
	s.push(t, a, "v1.0.0", needs(d, ">=v1.0.0"))

	s.run(t, step{
		name:      "install",
		manifests: []manifest{configuration("predict-nv-a", a+":v1.0.0")},
		blocking:  true,
		stall:     d,
		want:      settled(false, pkg{"configuration/predict-nv-a", "v1.0.0", unhealthy}),
	})
}
