package jobframework

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Labels, annotations, the scheduling gate and the finalizer of the
// pod-based integrations (plain pods, pod groups, and the pods of
// Deployments, StatefulSets and LeaderWorkerSets), with Kueue's keys.
const (
	// ManagedLabel marks a pod Kuota manages ("true"); the manager's pod
	// informer selects on it.
	ManagedLabel      = "kueue.x-k8s.io/managed"
	ManagedLabelValue = "true"
	// PodFinalizer keeps a managed pod until Kuota has read its end.
	PodFinalizer = "kueue.x-k8s.io/managed"
	// AdmissionGate holds a managed pod out of scheduling until its
	// Workload is admitted.
	AdmissionGate = "kueue.x-k8s.io/admission"

	// PodGroupNameLabel names the pod group; it is also the name of the
	// group's Workload.
	PodGroupNameLabel = "kueue.x-k8s.io/pod-group-name"
	// PodGroupTotalCountAnnotation is the number of pods of the group.
	PodGroupTotalCountAnnotation = "kueue.x-k8s.io/pod-group-total-count"
	// PodGroupFastAdmissionAnnotation lets a group's Workload be created
	// from its first pod, sized by the total count.
	PodGroupFastAdmissionAnnotation = "kueue.x-k8s.io/pod-group-fast-admission"
	// PodGroupServingAnnotation marks a group that never finishes (a
	// serving workload).
	PodGroupServingAnnotation = "kueue.x-k8s.io/pod-group-serving"
	// RoleHashAnnotation names the PodSet of a group's pod.
	RoleHashAnnotation = "kueue.x-k8s.io/role-hash"
	// RetriableInGroupAnnotation "false" ends a group once none of its pods
	// runs.
	RetriableInGroupAnnotation = "kueue.x-k8s.io/retriable-in-group"
	// SuspendingParentAnnotation, on a pod template, names the framework of
	// the parent object (Deployment, StatefulSet, LeaderWorkerSet) that
	// asks its pods to be gated.
	SuspendingParentAnnotation = "kueue.x-k8s.io/pod-suspending-parent"
	// IsGroupWorkloadAnnotation marks the Workload of a pod group.
	IsGroupWorkloadAnnotation = "kueue.x-k8s.io/is-group-workload"

	// PodTerminationTarget is the pod condition set on a pod Kuota deletes
	// because its Workload was evicted or deleted.
	PodTerminationTarget = corev1.PodConditionType("TerminationTarget")

	// PodFrameworkName is the framework name of the plain pod integration,
	// which the other pod-based integrations require.
	PodFrameworkName = "pod"
)

// IsGated reports whether the pod carries the admission gate.
func IsGated(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == AdmissionGate })
}

// Gate adds the admission gate; it reports whether it was missing.
func Gate(p *corev1.Pod) bool {
	if IsGated(p) {
		return false
	}
	p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: AdmissionGate})
	return true
}

// Ungate removes the admission gate; it reports whether it was there.
func Ungate(p *corev1.Pod) bool {
	n := len(p.Spec.SchedulingGates)
	p.Spec.SchedulingGates = slices.DeleteFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == AdmissionGate })
	if len(p.Spec.SchedulingGates) == 0 {
		p.Spec.SchedulingGates = nil
	}
	return len(p.Spec.SchedulingGates) != n
}

// IsTerminal reports a pod that Succeeded or Failed.
func IsTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
