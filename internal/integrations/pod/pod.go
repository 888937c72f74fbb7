// Package pod queues plain pods and pod groups, and the pods of the
// parents that gate them (Deployments, StatefulSets, LeaderWorkerSets).
//
// A managed pod is created with the kueue.x-k8s.io/admission scheduling
// gate, the kueue.x-k8s.io/managed label and finalizer (webhook.go). A
// plain pod is one Workload of one PodSet "main", named as Kueue names it
// and owned by the pod; the pods labelled kueue.x-k8s.io/pod-group-name
// form one Workload named after the group, admitted together, with a
// PodSet per role (pods of the same shape), owned by all of them. Once the
// Workload is admitted the gate is lifted with the flavor's node selector
// and tolerations injected; an eviction deletes the started pods; a pod
// that ends, or a group whose pods all succeeded, finishes the Workload;
// quota returns when the pods are gone (reconciler.go). group.go holds the
// pure reading of a unit's pods.
package pod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// GVK is the kind this package handles.
var GVK = corev1.SchemeGroupVersion.WithKind("Pod")

// Integration registers plain pods and pod groups.
var Integration = jobframework.Integration{
	Name:            jobframework.PodFrameworkName,
	GVK:             GVK,
	SetupWebhook:    setupWebhook,
	SetupReconciler: setupReconciler,
}
