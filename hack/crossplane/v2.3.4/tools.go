//go:build tools

// Package tools pins the Crossplane release that
// `CROSSPLANE_VERSION=v2.3.4 hack/build-crossplane.sh` builds, so that tests
// can run Crossplane's real package manager against the local test cluster.
// It lives in its own module so that none of Crossplane's dependencies reach
// the plugin's go.mod.
//
// Crossplane's go.mod replaces github.com/crossplane/crossplane/apis/v2 with
// a directory that its module zip leaves out; here that module comes from the
// proxy at the same release tag (go.mod requires it at v2.3.4).
package tools

import (
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane"
)
