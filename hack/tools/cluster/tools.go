//go:build tools

// Package cluster pins the control-plane commands that Kuota's tests and local
// cluster are built from. Nothing here is compiled into Kuota itself.
package cluster

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
