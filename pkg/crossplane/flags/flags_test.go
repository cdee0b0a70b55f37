package flags

import "testing"

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want Config
	}{
		{"defaults", []string{"core", "start"}, nil, Defaults()},
		{"the chart's args", []string{"core", "start", "--debug", "--enable-dependency-version-upgrades", "--enable-dependency-version-downgrades"}, nil,
			Config{DependencyUpgrades: true, DependencyDowngrades: true, PackageRuntime: "Deployment", PollInterval: "1m"}},
		{"values", []string{"core", "start", "--enable-dependency-version-upgrades=false", "--enable-signature-verification=true", "--poll-interval", "10s", "--package-runtime=External"}, nil,
			Config{SignatureVerification: true, PackageRuntime: "External", PollInterval: "10s"}},
		{"the last of two", []string{"--enable-dependency-version-upgrades", "--enable-dependency-version-upgrades=false"}, nil, Defaults()},
		{"environment", []string{"core", "start"}, map[string]string{"PACKAGE_RUNTIME": "External"},
			Config{PackageRuntime: "External", PollInterval: "1m"}},
	}
	for _, tc := range cases {
		if got := Parse(tc.args, tc.env); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if !Parse([]string{"--enable-dependency-version-downgrades"}, nil).Upgrades() {
		t.Error("downgrades turn on upgrades")
	}
}

func TestAssume(t *testing.T) {
	for v, want := range map[string][2]bool{"off": {false, false}, "upgrades": {true, false}, "downgrades": {true, true}} {
		c := Parse([]string{"--enable-dependency-version-downgrades", "--poll-interval=5s"}, nil).Assume(v)
		if c.DependencyUpgrades != want[0] || c.DependencyDowngrades != want[1] || c.PollInterval != "5s" {
			t.Errorf("%s: %+v", v, c)
		}
		if err := CheckAssumption(v); err != nil {
			t.Error(err)
		}
	}
	if CheckAssumption("on") == nil {
		t.Error("on is no assumption")
	}
}
