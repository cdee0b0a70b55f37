package exit

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestMessage(t *testing.T) {
	providers := schema.GroupResource{Group: "pkg.crossplane.io", Resource: "providers"}
	regURL, _ := url.Parse("http://127.0.0.1:5000/v2/crossplane-contrib/provider-nop/manifests/v0.4.0")
	cases := []struct {
		name string
		err  error
		want []string
	}{
		{
			name: "forbidden keeps context and adds a way out",
			err: fmt.Errorf("install provider-nop: %w", apierrors.NewForbidden(providers, "provider-nop",
				errors.New(`User "dev" cannot create resource "providers"`))),
			want: []string{"install provider-nop: Error from server (Forbidden): ", `cannot create resource "providers"`, "RBAC"},
		},
		{
			name: "not found",
			err:  apierrors.NewNotFound(providers, "provider-nop"),
			want: []string{`Error from server (NotFound): providers.pkg.crossplane.io "provider-nop" not found`},
		},
		{
			name: "connection refused names the server",
			err: fmt.Errorf("read server version: %w", &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/version?timeout=32s",
				Err: &netOpError{syscall.ECONNREFUSED}}),
			want: []string{"read server version: cannot reach https://127.0.0.1:6443: connection refused", "--kubeconfig"},
		},
		{
			name: "unreachable registry keeps the reference",
			err: fmt.Errorf("pull 127.0.0.1:1/x/y:v1: %w", errors.Join(
				&url.Error{Op: "Get", URL: "https://127.0.0.1:1/v2/", Err: &netOpError{syscall.ECONNREFUSED}},
				errors.New("and the plain HTTP attempt failed too"))),
			want: []string{"pull 127.0.0.1:1/x/y:v1: cannot reach https://127.0.0.1:1: connection refused (is the registry running"},
		},
		{
			name: "registry 401",
			err: fmt.Errorf("pull: %w", &transport.Error{StatusCode: http.StatusUnauthorized,
				Request: &http.Request{URL: regURL},
				Errors:  []transport.Diagnostic{{Code: transport.UnauthorizedErrorCode, Message: "authentication required"}}}),
			want: []string{"pull: registry http://127.0.0.1:5000 requires authentication: UNAUTHORIZED: authentication required", "docker login"},
		},
		{
			name: "multi-line errors fold",
			err:  errors.New("first\nsecond\n"),
			want: []string{"first; second"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Message(c.err)
			if strings.Contains(got, "\n") {
				t.Errorf("message spans lines: %q", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("Message() = %q\nlacks %q", got, w)
				}
			}
		})
	}
}

type netOpError struct{ err error }

func (e *netOpError) Error() string { return "dial tcp: " + e.err.Error() }
func (e *netOpError) Unwrap() error { return e.err }

func TestCode(t *testing.T) {
	if Code(nil) != OK {
		t.Error("nil is not OK")
	}
	if Code(errors.New("x")) != Error {
		t.Error("plain error")
	}
	if got := Code(fmt.Errorf("wrapped: %w", WithCode(3, errors.New("breaking")))); got != 3 {
		t.Errorf("wrapped code = %d", got)
	}
	if WithCode(3, nil) != nil {
		t.Error("WithCode(nil) must stay nil")
	}
	ue := &UsageError{Err: errors.New("unknown flag: --x"), Hint: "See 'kubectl xpkg --help' for usage."}
	if Code(ue) != Usage || Message(ue) != "unknown flag: --x\nSee 'kubectl xpkg --help' for usage." {
		t.Errorf("usage error: %d %q", Code(ue), Message(ue))
	}
}

// TestReport: an error ends as one "error: " line and its code; Silent
// (already printed) and success print nothing.
func TestReport(t *testing.T) {
	for _, c := range []struct {
		err  error
		out  string
		code int
	}{
		{nil, "", OK},
		{Silent, "", Error},
		{fmt.Errorf("refused: %w", Silent), "", Error},
		{WithCode(PlanRefused, errors.New("install of provider/x refused")), "error: install of provider/x refused\n", PlanRefused},
		{errors.New("two\nlines"), "error: two; lines\n", Error},
	} {
		var b strings.Builder
		if code := Report(&b, c.err); code != c.code || b.String() != c.out {
			t.Errorf("Report(%v) = %d, %q; want %d, %q", c.err, code, b.String(), c.code, c.out)
		}
	}
}
