// Package version holds the plugin's build identity, stamped at link time:
//
//	go build -ldflags "-X github.com/kubectl-xpkg/kubectl-xpkg/pkg/version.version=v0.1.0 ..."
package version

import (
	"runtime"
	"runtime/debug"
)

// Set by -ldflags -X at build time; see the Makefile and .goreleaser.yaml.
var (
	version   = ""
	gitCommit = ""
	buildDate = ""
)

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit,omitempty"`
	BuildDate string `json:"buildDate,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build identity. A binary built without -ldflags (go install,
// go run) falls back to the module version Go recorded, or "(devel)".
func Get() Info {
	v := version
	if v == "" {
		v = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			v = bi.Main.Version
		}
	}
	return Info{
		Version:   v,
		GitCommit: gitCommit,
		BuildDate: buildDate,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// UserAgent is how the plugin names itself to API servers and registries,
// in the form kubectl uses: kubectl-xpkg/VERSION (OS/ARCH) COMMIT.
func (i Info) UserAgent() string {
	ua := "kubectl-xpkg/" + i.Version + " (" + i.Platform + ")"
	if i.GitCommit != "" {
		ua += " " + i.GitCommit
	}
	return ua
}
