package crossplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// BinDirEnvVar names the directory holding the crossplane binary; make test
// sets it to what hack/build-crossplane.sh printed.
const BinDirEnvVar = "XPKG_CROSSPLANE_BIN"

// DefaultBinDir finds the crossplane binary hack/build-crossplane.sh cached:
// $XPKG_CROSSPLANE_BIN, else hack/bin/crossplane-<version>. A binary of
// another release would check packages' Crossplane version constraints
// against the wrong version, so no other directory is guessed.
func DefaultBinDir(version string) (string, error) {
	if d := os.Getenv(BinDirEnvVar); d != "" {
		return d, checkBinary(d, "crossplane")
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "hack", "bin", "crossplane-"+version)
	if err := checkBinary(dir, "crossplane"); err != nil {
		return "", fmt.Errorf("%w: run hack/build-crossplane.sh (make test does)", err)
	}
	return dir, nil
}

// controllerManagerDir finds kube-controller-manager: next to the kubectl
// the environment was started with, else where testenv finds its binaries
// (an environment started before kube-controller-manager was added to
// hack/build-k8s.sh has none beside it).
func controllerManagerDir(env *testenv.Env) (string, error) {
	if env.Kubectl != "" {
		dir := filepath.Dir(env.Kubectl)
		if checkBinary(dir, "kube-controller-manager") == nil {
			return dir, nil
		}
	}
	dir, err := testenv.DefaultBinDir()
	if err != nil {
		return "", err
	}
	if err := checkBinary(dir, "kube-controller-manager"); err != nil {
		return "", fmt.Errorf("%w: run hack/build-k8s.sh (make test does)", err)
	}
	return dir, nil
}

func checkBinary(dir, name string) error {
	st, err := os.Stat(filepath.Join(dir, name))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no %s in %s", name, dir)
	case err != nil:
		return err
	case st.IsDir() || st.Mode()&0o111 == 0:
		return fmt.Errorf("%s in %s is not an executable", name, dir)
	}
	return nil
}
