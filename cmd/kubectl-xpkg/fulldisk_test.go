//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

// TestFullDiskIsAnError: every report written to a stdout that cannot
// take it (/dev/full: no space left) ends non-zero and says why; none
// passes for a short report.
func TestFullDiskIsAnError(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "fulldisk-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", ref, name, "--wait=60s").Succeeds(t)

	for _, args := range [][]string{
		{"diff", sampleDir(t, "provider-helm", "v1.3.0"), sampleDir(t, "provider-helm", "v1.4.0")},
		{"diff", sampleDir(t, "provider-helm", "v1.3.0"), sampleDir(t, "provider-helm", "v1.4.0"), "--stat"},
		{"validate", sampleDir(t, "provider-nop", "v0.4.0")},
		{"get", "-o", "name"},
		{"describe", "provider/" + name},
		{"tree"},
		{"tree", "-o", "dot"},
	} {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skipf("no /dev/full: %v", err)
		}
		c := exec.Command(clitest.Binary(t), append(args, "--kubeconfig", l.env.Kubeconfig)...)
		var stderr bytes.Buffer
		c.Stdout, c.Stderr = full, &stderr
		err = c.Run()
		full.Close()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%v to a full disk: %v\n%s", args, err, stderr.String())
		}
	}
}
