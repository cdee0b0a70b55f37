package measure

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// lightChild is the measuring child UseLightChild built; "" runs the
// benchmark binary itself as the child.
var lightChild string

// childPkg is the light child's package.
const childPkg = "github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure/child"

// UseLightChild builds the light measuring child into dir with go build
// (CGO_ENABLED=0, -trimpath, stripped) and has every later measurement run
// through it. It must be called from inside the plugin's module.
func UseLightChild(dir string) error {
	bin := filepath.Join(dir, "measure-child")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, childPkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build the measuring child: %v: %s", err, out)
	}
	lightChild = bin
	return nil
}
