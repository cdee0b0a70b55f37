//go:build tools

// Package tools pins the crossplane CLI (cmd/crank of crossplane v1.20.0,
// the newest release whose module holds the CLI) that hack/bench measures
// startup against.
package tools

import _ "github.com/crossplane/crossplane/cmd/crank"
