package resolve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// credsUser are the user's own registry credentials (the same for every
// cluster of a fleet: one process, one docker config).
const credsUser = "user"

// clusterCreds names the credentials a cluster's pull secrets (kc) give
// for ref's registry: "user" when they give none (the user's own apply),
// else "secret:" and a hash of the credentials themselves, so that two
// clusters share a read only when they would send the same credentials;
// "" when that cannot be told (no sharing).
func clusterCreds(kc authn.Keychain, ref string, so source.Options) string {
	r, err := source.ParseReferenceFor(ref, so)
	if err != nil {
		return ""
	}
	a, err := kc.Resolve(r.Context())
	if err != nil {
		return ""
	}
	if a == authn.Anonymous {
		return credsUser
	}
	cfg, err := a.Authorization()
	if err != nil || cfg == nil {
		return ""
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return "secret:" + hex.EncodeToString(sum[:])
}
