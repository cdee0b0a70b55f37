// Package flags reads how the running Crossplane is configured, from the
// arguments and environment of its Deployment's crossplane container, as
// `crossplane core start` parses them (cmd/crossplane/core in v2.3.4 and
// v2.4.2): the flags that change what its package manager does. Pure
// parsing: pkg/cluster reads the Deployment.
package flags

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Config is what the package manager is configured to do.
type Config struct {
	// DependencyUpgrades (--enable-dependency-version-upgrades, alpha):
	// the resolver moves an installed dependency to a version every
	// dependent accepts; DependencyDowngrades
	// (--enable-dependency-version-downgrades, which turns on upgrades
	// too) may move it down.
	DependencyUpgrades   bool `json:"dependencyUpgrades"`
	DependencyDowngrades bool `json:"dependencyDowngrades"`
	// SignatureVerification (--enable-signature-verification, alpha):
	// ImageConfigs' verification policies are enforced.
	SignatureVerification bool `json:"signatureVerification"`
	// PackageRuntime (--package-runtime, $PACKAGE_RUNTIME): Deployment by
	// default, External where Crossplane starts no runtime.
	PackageRuntime string `json:"packageRuntime"`
	// PollInterval (--poll-interval): how often a resource is checked for
	// drift; 1m by default.
	PollInterval string `json:"pollInterval"`
}

// Defaults is the configuration of a Crossplane started without flags.
func Defaults() Config { return Config{PackageRuntime: "Deployment", PollInterval: "1m"} }

// Parse reads the flags in args (the container's args, "core" and
// "start" among them) and env (its environment) over Defaults. A flag
// given twice takes its last value, as the parser does.
func Parse(args []string, env map[string]string) Config {
	c := Defaults()
	if v := env["PACKAGE_RUNTIME"]; v != "" {
		c.PackageRuntime = v
	}
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		if !strings.HasPrefix(args[i], "--") {
			continue
		}
		boolean := func() bool {
			if !hasValue {
				return true
			}
			b, err := strconv.ParseBool(value)
			return err == nil && b
		}
		text := func() string {
			if !hasValue && i+1 < len(args) {
				i++
				return args[i]
			}
			return value
		}
		switch name {
		case "enable-dependency-version-upgrades":
			c.DependencyUpgrades = boolean()
		case "enable-dependency-version-downgrades":
			c.DependencyDowngrades = boolean()
		case "enable-signature-verification":
			c.SignatureVerification = boolean()
		case "package-runtime":
			c.PackageRuntime = text()
		case "poll-interval":
			c.PollInterval = text()
		}
	}
	return c
}

// Upgrades tells whether the resolver moves installed dependencies:
// either flag turns it on.
func (c Config) Upgrades() bool { return c.DependencyUpgrades || c.DependencyDowngrades }

// Assumptions are what a plan may take the dependency-upgrade flags to
// be in place of reading them (--assume-dependency-upgrades).
var Assumptions = []string{"off", "upgrades", "downgrades"}

// CheckAssumption refuses a value that is none of Assumptions ("" is
// none at all).
func CheckAssumption(v string) error {
	if v == "" || slices.Contains(Assumptions, v) {
		return nil
	}
	return fmt.Errorf("--assume-dependency-upgrades must be off, upgrades or downgrades, not %q", v)
}

// Assume is c with the dependency-upgrade flags an assumption sets.
func (c Config) Assume(v string) Config {
	c.DependencyUpgrades = v != "off"
	c.DependencyDowngrades = v == "downgrades"
	return c
}
