package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnanswered(t *testing.T) {
	for name, c := range map[string]struct {
		err  error
		want string // "" when the error is kept as it is
	}{
		"an answer":      {apierrors.NewServiceUnavailable("busy"), ""},
		"a conflict":     {apierrors.NewConflict(schema.GroupResource{Resource: "providers"}, "p", errors.New("x")), ""},
		"never sent":     {&url.Error{Op: "Patch", URL: "https://h/x", Err: syscall.ECONNREFUSED}, ""},
		"timed out":      {&url.Error{Op: "Patch", URL: "https://h/x", Err: context.DeadlineExceeded}, "(timed out): it may have been made"},
		"body cut short": {fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", errors.New("net/http: request canceled (Client.Timeout or context cancellation while reading body)")), "(timed out)"},
		"interrupted":    {&url.Error{Op: "Patch", URL: "https://h/x", Err: context.Canceled}, "(interrupted)"},
		"reset":          {&url.Error{Op: "Patch", URL: "https://h/x", Err: syscall.ECONNRESET}, "(cut short: Patch \"https://h/x\": connection reset by peer)"},
	} {
		got := unanswered(c.err, "change of provider/p", "provider/p")
		var ue *UnansweredError
		if c.want == "" {
			if got != c.err {
				t.Errorf("%s: %v wrapped as %v", name, c.err, got)
			}
			continue
		}
		if !errors.As(got, &ue) || !errors.Is(got, c.err) || !strings.Contains(got.Error(), c.want) ||
			!strings.Contains(got.Error(), "no answer to the change of provider/p") || !strings.HasSuffix(got.Error(), "kubectl xpkg describe provider/p shows where it stands") {
			t.Errorf("%s: %v", name, got)
		}
	}
}

// TestUnansweredNamesWhereToLook: a package is described; any other
// object (a managed resource being made again, the Lock) is got, since
// describe reads packages only.
func TestUnansweredNamesWhereToLook(t *testing.T) {
	cut := &url.Error{Op: "Post", URL: "https://h/x", Err: context.Canceled}
	for object, want := range map[string]string{
		"function/f":                          "kubectl xpkg describe function/f shows",
		"nopresources.nop.crossplane.io/held": "kubectl get nopresources.nop.crossplane.io/held -o yaml shows",
		"buckets.s3.example.org/team-a/held":  "kubectl get buckets.s3.example.org held -n team-a -o yaml shows",
		"lock/lock":                           "kubectl get lock/lock -o yaml shows",
	} {
		if got := unanswered(cut, "creation of "+object, object).Error(); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", object, got, want)
		}
	}
}
