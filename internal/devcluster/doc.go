// Package devcluster brings up and tears down a local Kubernetes cluster for
// Kuota's demos and end-to-end tests, without a container engine.
//
// The cluster is made by kwokctl with its "binary" runtime: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and the kwok
// controller run as local processes, built from source by `make tools` into a
// cached folder (Options.ToolsBin, by default <repo>/.cache/bin or the folder
// named by $KUOTA_TOOLS_BIN). Nodes are plain Node objects annotated
// `kwok.x-k8s.io/node: fake`; kwok plays their kubelet with the Stages of
// stages.go, which kwokctl is given at creation: a scheduled pod turns
// Running and Ready and keeps running, as a serving pod does, unless it
// asks to finish. A pod annotated kuota.dev/run-for: <duration> succeeds
// that long after it starts; with Options.PodRuntime (`kuota dev up
// --pod-runtime`), every pod whose restartPolicy is not Always (a Job's)
// succeeds that long after it starts. Pods of Deployments, StatefulSets and
// LeaderWorkerSets (restartPolicy Always) run until deleted.
//
// Layout: options.go, parse.go, nodes.go and stages.go are pure (defaults, validation,
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
// The Stages, like the port, take effect when the cluster is created: a
// cluster reused from an earlier `dev up` keeps its own.
package devcluster
