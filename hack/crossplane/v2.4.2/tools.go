//go:build tools

// Package tools pins the Crossplane release that
// `CROSSPLANE_VERSION=v2.4.2 hack/build-crossplane.sh` builds (see
// ../v2.3.4 for why it is a module of its own).
//
// Crossplane v2.4.2 requires crossplane-runtime/v2 v2.4.2, which the Go
// module proxy does not serve; go.mod replaces it with v2.4.0, the same API.
// Its go.mod replaces github.com/crossplane/crossplane/apis/v2 with a
// directory its module zip leaves out, and requires v2.4.0 of it otherwise:
// the proxy serves that release of the apis module, not v2.4.2's tag.
package tools

import (
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane"
)
