package testenv

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const modulePath = "github.com/kubectl-xpkg/kubectl-xpkg"

// ModuleRoot finds the repository root (the directory of the plugin's go.mod)
// from the working directory, which is a package directory under go test.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isPluginModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the kubectl-xpkg module")
		}
		dir = parent
	}
}

func isPluginModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.TrimSpace(mod) == modulePath
		}
	}
	return false
}

// DefaultBinDir finds the binaries hack/build-k8s.sh cached: $XPKG_K8S_BIN,
// else the newest hack/bin/k8s-* directory that holds a kube-apiserver.
func DefaultBinDir() (string, error) {
	if d := os.Getenv("XPKG_K8S_BIN"); d != "" {
		return d, nil
	}
	d, err := newestBuilt("k8s-*", "kube-apiserver")
	if err != nil {
		return "", err
	}
	if d == "" {
		return "", errors.New("no kube-apiserver built under hack/bin: run hack/build-k8s.sh (make test does)")
	}
	return d, nil
}

// newestBuilt is the newest hack/bin directory matching pattern that holds
// file ("" when none does); builds in progress (.tmp.) do not count.
func newestBuilt(pattern, file string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "hack", "bin", pattern))
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, file)); err == nil && !strings.Contains(d, ".tmp.") {
			return d, nil
		}
	}
	return "", nil
}

// RegistryBinEnvVar names the directory holding the registry binary; make
// test sets it to what hack/build-registry.sh printed.
const RegistryBinEnvVar = "XPKG_REGISTRY_BIN"

// DefaultRegistryBin finds the registry hack/build-registry.sh cached:
// registry in $XPKG_REGISTRY_BIN, else in the newest hack/bin/registry-*
// directory. A registry on PATH is never used: the tests run the one
// version this repository pins.
func DefaultRegistryBin() (string, error) {
	if d := os.Getenv(RegistryBinEnvVar); d != "" {
		return filepath.Join(d, "registry"), nil
	}
	d, err := newestBuilt("registry-*", "registry")
	if err != nil {
		return "", err
	}
	if d == "" {
		return "", errors.New("no registry built under hack/bin: run hack/build-registry.sh (make test does)")
	}
	return filepath.Join(d, "registry"), nil
}
