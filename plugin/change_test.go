package plugin

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// TestChangeFlagsAreCheckedFirst: flag combinations that cannot be
// honoured are usage errors before any cluster or registry is asked (the
// kubeconfig here points nowhere).
func TestChangeFlagsAreCheckedFirst(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"upgrade", "p", "v1", "--dry-run", "--atomic"}, "--dry-run cannot be combined with --atomic or --wait"},
		{[]string{"upgrade", "p", "v1", "--dry-run=server", "--wait"}, "--dry-run cannot be combined"},
		{[]string{"upgrade", "p", "v1", "--dry-run=later"}, `--dry-run must be "none", "client" or "server", not "later"`},
		{[]string{"upgrade", "p", "v1", "-o", "wide"}, "wide"},
		{[]string{"rollback", "p", "--dry-run", "--wait"}, "--wait cannot be combined with --dry-run"},
		{[]string{"uninstall", "p", "--dry-run", "--wait=1m"}, "--wait cannot be combined with --dry-run"},
		{[]string{"install", "provider", "r.example.org/p:v1", "--dry-run=maybe"}, `--dry-run must be "none", "client" or "server"`},
		{[]string{"get", "-o", "bogus"}, `--output must be wide, json, yaml, name, custom-columns=..., jsonpath=..., go-template=... or template=...`},
	} {
		streams, _, _, _ := genericiooptions.NewTestIOStreams()
		cmd := NewCmdRoot(streams)
		cmd.SetArgs(append(c.args, "--kubeconfig", "/nonexistent"))
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
			continue
		}
		if code := exit.Code(err); code != exit.Usage {
			t.Errorf("%v: exit %d, want %d", c.args, code, exit.Usage)
		}
	}
}
