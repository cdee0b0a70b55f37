//go:build tools

// Package tools pins the programs that hack/build-k8s.sh builds for the local
// test cluster: kube-apiserver, etcd and kubectl. It lives in its own module so
// that none of Kubernetes' server dependencies reach the plugin's go.mod.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
