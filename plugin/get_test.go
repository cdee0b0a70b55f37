package plugin

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// TestGetRefusesNamesWithASelector: as kubectl does, rather than ignoring
// the selector.
func TestGetRefusesNamesWithASelector(t *testing.T) {
	r := newCLI(t).Run("get", "providers", "some-name", "-l", "team=platform").Fails(t, 1)
	contains(t, "get -l with names", r.Stderr, "error: name cannot be provided when a selector is specified")
}

// TestGetSeveralNamesAndNoHeaders: get A B prints the packages found and
// fails for the one missing, naming it, as kubectl get does;
// --no-headers leaves the header line out of every table.
func TestGetSeveralNamesAndNoHeaders(t *testing.T) {
	const name = "get-several-nop"
	x := newCLI(t, fakecluster.Object("pkg.crossplane.io/v1", "Provider", name,
		map[string]any{"spec": map[string]any{"package": "xpkg.example.test/org/provider-nop:v0.4.0"}}))

	r := x.Run("get", "providers", name, "no-such-provider").Fails(t, 1)
	if row := tableRow(r.Stdout, name); len(row) == 0 || !strings.HasPrefix(r.Stdout, "NAME ") {
		t.Errorf("get A B with B missing printed %q", r.Stdout)
	}
	contains(t, "get A B", r.Stderr, "no-such-provider", "not found")
	r = x.Run("get", name, "no-such-provider").Fails(t, 1)
	contains(t, "get A B without a kind", r.Stderr, `no package named "no-such-provider"`)
	contains(t, "get A B without a kind", r.Stdout, name)
	r = x.Run("get", "providers", "no-such-a", "no-such-b").Fails(t, 1)
	if n := strings.Count(r.Stderr, "error: Error from server (NotFound)"); n != 2 || r.Stdout != "" {
		t.Errorf("get A B, both missing: %d error lines, stdout %q:\n%s", n, r.Stdout, r.Stderr)
	}

	for _, o := range []string{"", "wide", "custom-columns=NAME:.metadata.name,PACKAGE:.spec.package"} {
		args := []string{"get", "providers", name, "--no-headers"}
		if o != "" {
			args = append(args, "-o", o)
		}
		r = x.Run(args...).Succeeds(t)
		if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], name+" ") {
			t.Errorf("get --no-headers -o %q printed %q", o, r.Stdout)
		}
	}
}
