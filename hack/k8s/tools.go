//go:build tools

// Package tools pins the programs that hack/build-k8s.sh builds for the local
// test cluster: kube-apiserver, etcd, kubectl and kube-controller-manager (run
// with only its garbage collector, so that deletes cascade as in a cluster).
// It lives in its own module so that none of Kubernetes' server dependencies
// reach the plugin's go.mod.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
