package exit

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// apiMessage rewrites an API server status error. The server's own message
// already names the user, verb, resource and name; we add what to do next.
func apiMessage(err error) (string, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "", false
	}
	inner, _ := status.(error)
	s := status.Status()
	msg := "Error from server"
	if s.Reason != "" && s.Reason != metav1.StatusReasonUnknown {
		msg += " (" + string(s.Reason) + ")"
	}
	msg += ": " + oneLine(s.Message)
	switch s.Reason {
	case metav1.StatusReasonForbidden:
		msg = hint(msg, "ask a cluster administrator for RBAC permission, or choose another identity with --context, --user or --as")
	case metav1.StatusReasonUnauthorized:
		msg = hint(msg, "the server rejected the credentials: check the user in your kubeconfig, --token or --context")
	case metav1.StatusReasonNotFound:
		if s.Details != nil && s.Details.Name == "" && s.Details.Kind != "" {
			msg = hint(msg, "the cluster does not serve this API: is Crossplane installed?")
		}
	case metav1.StatusReasonConflict:
		msg = hint(msg, "the object changed while we worked on it: run the command again")
	}
	if inner == nil {
		return msg, true
	}
	return prefixed(err, inner, msg), true
}

// connectionMessage names the API server or registry that could not be reached.
func connectionMessage(err error) (string, bool) {
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		return "", false
	}
	host := uerr.URL
	if u, perr := url.Parse(uerr.URL); perr == nil && u.Host != "" {
		host = u.Scheme + "://" + u.Host
	}
	var reason string
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "connection refused"
	case errors.As(err, &dnsErr):
		reason = "no such host " + dnsErr.Name
	case uerr.Timeout():
		reason = "timed out"
	default:
		reason = oneLine(uerr.Err.Error())
	}
	h := "is the server running? check --kubeconfig, --context and --server"
	if u, perr := url.Parse(uerr.URL); perr == nil && !kubePath(u.Path) {
		// The OCI distribution API (/v2/) or a registry's token service
		// (/token, /oauth2/token, /service/token...): not the cluster.
		h = "is the registry running and the reference right? a registry off loopback that speaks plain HTTP needs --insecure"
	}
	return prefixed(err, uerr, hint("cannot reach "+host+": "+reason, h)), true
}

// kubePath tells the paths of the Kubernetes API (under any prefix a proxy
// in the kubeconfig's server adds) from a registry's.
func kubePath(p string) bool {
	if p == "" || p == "/" {
		return true
	}
	for _, seg := range []string{"/api", "/apis", "/version", "/openapi", "/healthz", "/livez", "/readyz"} {
		if strings.HasSuffix(p, seg) || strings.Contains(p, seg+"/") {
			return true
		}
	}
	return false
}
