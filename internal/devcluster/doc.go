// Package devcluster brings up and tears down a local Kubernetes cluster for
// Kuota's demos and end-to-end tests, without a container engine.
//
// The cluster is made by kwokctl with its "binary" runtime: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and the kwok
// controller run as local processes, built from source by `make tools` into a
// cached folder (Options.ToolsBin, by default <repo>/.cache/bin or the folder
// named by $KUOTA_TOOLS_BIN). Nodes are plain Node objects annotated
// `kwok.x-k8s.io/node: fake`; kwok plays their kubelet, and its default stages
// move pods owned by a Job to Running and then Succeeded, so real batch/v1
// Jobs run to completion.
//
// Layout: options.go, parse.go and nodes.go are pure (defaults, validation,
// parsing of labels, resources and node groups, desired Node objects);
// kwokctl.go builds kwokctl command lines and checks the tool binaries and the
// port; cluster.go runs kwokctl and api.go talks to the API server with
// client-go.
//
// Up is idempotent. A running cluster is reused, a stopped one is started,
// and the fake nodes are reconciled with server-side apply under the field
// manager "kuota-dev": changed capacity or labels are updated, nodes of this
// tool that are no longer wanted are deleted. The port and the QPS setting
// take effect when the cluster is created; asking for another port for an
// existing cluster is an error. kwokctl is always told not to touch the
// user's ~/.kube/config; the kubeconfig lives at
// $KWOK_WORKDIR/clusters/<name>/kubeconfig.yaml.
//
// kwokctl v0.8.0 installs kwok's "fast" stages by default: a pod owned by a
// Job goes Running and then Succeeded at once, with no delay. Giving a pod a
// runtime needs other Stage objects (kwokctl --config); Up does not do that.
package devcluster
