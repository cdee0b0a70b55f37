package plugin

import (
	"strings"
	"testing"
)

// TestPlanOfflineFlags: online the cluster is the base, and offline
// there is nothing to prune nor two stdins to read.
func TestPlanOfflineFlags(t *testing.T) {
	for _, tc := range []struct {
		o    PlanOptions
		want string
	}{
		{PlanOptions{Filenames: []string{"new/"}, Base: []string{"old/"}}, "--base needs --offline"},
		{PlanOptions{Filenames: []string{"new/"}, Offline: true, Prune: true}, "--prune cannot be combined with --offline"},
		{PlanOptions{Filenames: []string{"-"}, Offline: true, Base: []string{"-"}}, "cannot both read stdin"},
		{PlanOptions{Filenames: []string{"new/"}, Offline: true, Base: []string{"old/"}}, ""},
		{PlanOptions{Filenames: []string{"new/"}, Offline: true}, ""},
	} {
		err := tc.o.Validate()
		if err != nil && (tc.want == "" || !strings.Contains(err.Error(), tc.want)) || err == nil && tc.want != "" {
			t.Errorf("%+v: err %v, want %q", tc.o, err, tc.want)
		}
	}
}
