package exit

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// registryMessage rewrites an OCI registry error into one line naming the
// registry and, for the common refusals, what to do about them.
func registryMessage(err error) (string, bool) {
	var terr *transport.Error
	if !errors.As(err, &terr) {
		return "", false
	}
	host := "the registry"
	if terr.Request != nil && terr.Request.URL != nil {
		host = "registry " + (&url.URL{Scheme: terr.Request.URL.Scheme, Host: terr.Request.URL.Host}).String()
	}
	detail := oneLine(terr.Error())
	if len(terr.Errors) > 0 {
		detail = string(terr.Errors[0].Code) + ": " + oneLine(terr.Errors[0].Message)
	}
	var msg string
	switch terr.StatusCode {
	case http.StatusUnauthorized:
		msg = hint(host+" requires authentication: "+detail,
			"log in with 'docker login', or point DOCKER_CONFIG at a config.json that holds credentials for it")
	case http.StatusForbidden:
		msg = hint(host+" denied access: "+detail, "the credentials in your docker config lack permission for this repository")
	case http.StatusNotFound:
		msg = hint(host+": not found: "+detail, "check the repository name and tag")
	case http.StatusTooManyRequests:
		msg = hint(host+" is rate limiting requests: "+detail, "wait and try again")
	default:
		msg = host + ": " + detail
	}
	return prefixed(err, terr, msg), true
}
