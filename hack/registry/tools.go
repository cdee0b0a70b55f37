//go:build tools

// Package tools pins the OCI registry that hack/build-registry.sh builds for
// the local test environment: the CNCF distribution registry, the one Docker
// Hub, Harbor and GitLab run. It lives in its own module so that none of its
// dependencies reach the plugin's go.mod.
package tools

import (
	_ "github.com/distribution/distribution/v3/cmd/registry"
)
