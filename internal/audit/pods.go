package audit

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	wlpkg "github.com/kuota-dev/kuota/internal/workload"
)

// Labels and annotations that tie a pod to its Workload, as Kuota sets them
// (the keys of internal/jobframework, repeated so that the audit does not
// depend on the manager's packages).
const (
	// workloadAnnotation, on a pod of an admitted job's template, names its
	// Workload.
	workloadAnnotation = "kueue.x-k8s.io/workload"
	// prebuiltLabel names the Workload another controller made for the job.
	prebuiltLabel = "kueue.x-k8s.io/prebuilt-workload-name"
	// managedLabel ("true") marks the pods the pod integration queues:
	// plain pods, pod groups, the pods of Deployments and StatefulSets.
	managedLabel = "kueue.x-k8s.io/managed"
	// groupLabel names a pod's group; the group's Workload has its name.
	groupLabel = "kueue.x-k8s.io/pod-group-name"
	// groupWorkloadAnnotation ("true") marks the Workload of a pod group.
	groupWorkloadAnnotation = "kueue.x-k8s.io/is-group-workload"
)

// DefaultPodGrace is how long after its Workload lost its quota (or
// finished) a pod may still run, or after its deletion a Workload whose
// job is gone may still hold quota, before the audit reports it.
const DefaultPodGrace = 30 * time.Second

// Pod is what the audit keeps of a pod of a managed job.
type Pod struct {
	Namespace, Name string
	UID             types.UID
	// Workload is the Workload the pod names: its prebuilt-workload label,
	// else the workload annotation of the admitted template.
	Workload string
	// Group is the pod's group (kueue.x-k8s.io/pod-group-name).
	Group string
	// Managed is the kueue.x-k8s.io/managed=true label.
	Managed bool
	// Node is spec.nodeName.
	Node string
	// Gated: the pod has scheduling gates.
	Gated bool
	// Terminal: Succeeded or Failed.
	Terminal bool
	// Deleting: a deletionTimestamp is set.
	Deleting bool
}

// podOf keeps what the audit needs of p; false for a pod no managed job
// owns (the audit does not keep it).
func podOf(p *corev1.Pod) (Pod, bool) {
	out := Pod{
		Namespace: p.Namespace,
		Name:      p.Name,
		UID:       p.UID,
		Workload:  p.Labels[prebuiltLabel],
		Group:     p.Labels[groupLabel],
		Managed:   p.Labels[managedLabel] == "true",
		Node:      p.Spec.NodeName,
		Gated:     len(p.Spec.SchedulingGates) > 0,
		Terminal:  p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed,
		Deleting:  p.DeletionTimestamp != nil,
	}
	if out.Workload == "" {
		out.Workload = p.Annotations[workloadAnnotation]
	}
	return out, out.Workload != "" || out.Managed
}

func (p *Pod) key() string { return p.Namespace + "/" + p.Name }

// running: on a node and not finished, being deleted included (its
// containers stop through a grace period, holding the node's resources).
func (p *Pod) running() bool { return p.Node != "" && !p.Terminal }

// mayRun: not finished, not being deleted, and scheduled or free to be.
func (p *Pod) mayRun() bool {
	return !p.Terminal && !p.Deleting && (p.Node != "" || !p.Gated)
}

// podIndex finds the Workload of a pod.
type podIndex struct {
	byName map[string]*workload
	// byPod: plain pods' Workloads, by the UID of the pod that controls them.
	byPod map[types.UID]*workload
	// replacedBy: an elastic job's Workload slice by the slice it replaces.
	replacedBy map[string]*workload
}

func newPodIndex(wls []*workload) *podIndex {
	ix := &podIndex{byName: map[string]*workload{}, byPod: map[types.UID]*workload{}, replacedBy: map[string]*workload{}}
	for _, w := range wls {
		ix.byName[w.name] = w
		if ref := metav1.GetControllerOfNoCopy(w.obj); ref != nil && ref.Kind == "Pod" && ref.APIVersion == "v1" {
			ix.byPod[ref.UID] = w
		}
		if old := w.obj.Annotations[kueue.WorkloadSliceReplacementForAnnotation]; old != "" {
			ix.replacedBy[old] = w
		}
	}
	return ix
}

// workloadOf returns the name ("ns/name") of the pod's Workload, "" when
// the pod does not say, and the Workload when it exists.
func (ix *podIndex) workloadOf(p *Pod) (string, *workload) {
	switch {
	case p.Workload != "":
		name := p.Namespace + "/" + p.Workload
		return name, ix.byName[name]
	case p.Group != "":
		name := p.Namespace + "/" + p.Group
		return name, ix.byName[name]
	case p.Managed:
		if w := ix.byPod[p.UID]; w != nil {
			return w.name, w
		}
	}
	return "", nil
}

// current follows an elastic job's slices: a slice finished because a
// newer one replaced it hands its pods to that one.
func (ix *podIndex) current(w *workload) *workload {
	for range 8 {
		next := ix.replacedBy[w.name]
		if !w.finished || next == nil {
			return w
		}
		w = next
	}
	return w
}

// checkPods reports pods that run, or may run, while their Workload is not
// admitted. An eviction in progress (Evicted with the reservation still
// held) is not reported, nor a pod whose Workload lost its admission less
// than grace before now, when the pods were listed (a loss after that is
// not held against them).
func checkPods(pods []Pod, ix *podIndex, grace time.Duration, now time.Time) []Violation {
	var out []Violation
	for i := range pods {
		p := &pods[i]
		if !p.mayRun() {
			continue
		}
		name, w := ix.workloadOf(p)
		if w == nil {
			msg := fmt.Sprintf("%s but has no Workload", p.doing())
			if name != "" {
				msg = fmt.Sprintf("%s but its Workload %s does not exist", p.doing(), shortName(name))
			}
			out = append(out, Violation{KindPodWithoutAdmission, "Pod " + p.key(), msg})
			continue
		}
		w = ix.current(w)
		if w.admitted && w.quotaReserved && !w.finished {
			continue
		}
		conds := w.obj.Status.Conditions
		if w.quotaReserved && apimeta.IsStatusConditionTrue(conds, kueue.WorkloadEvicted) {
			continue
		}
		if now.Sub(lostAdmission(w)) < grace {
			continue
		}
		out = append(out, Violation{KindPodWithoutAdmission, "Pod " + p.key(), fmt.Sprintf(
			"%s but its Workload %s is not admitted (%s)", p.doing(), shortName(w.name), admissionState(w))})
	}
	return out
}

// doing says how the pod runs.
func (p *Pod) doing() string {
	if p.Node != "" {
		return "runs on node " + p.Node
	}
	return "is not gated (it may be scheduled)"
}

func shortName(nsName string) string {
	_, name, _ := strings.Cut(nsName, "/")
	return name
}

// lostAdmission is when the workload last stopped being admitted: the
// latest transition of QuotaReserved or Admitted to not True, or of
// Finished to True (zero when no condition says).
func lostAdmission(w *workload) time.Time {
	var at time.Time
	for _, c := range w.obj.Status.Conditions {
		lost := (c.Type == kueue.WorkloadFinished && c.Status == metav1.ConditionTrue) ||
			((c.Type == kueue.WorkloadQuotaReserved || c.Type == kueue.WorkloadAdmitted) && c.Status != metav1.ConditionTrue)
		if lost && c.LastTransitionTime.After(at) {
			at = c.LastTransitionTime.Time
		}
	}
	return at
}

// admissionState renders the conditions that decide admission.
func admissionState(w *workload) string {
	s := fmt.Sprintf("QuotaReserved is %s, Admitted is %s",
		conditionStatus(w.obj, kueue.WorkloadQuotaReserved), conditionStatus(w.obj, kueue.WorkloadAdmitted))
	if w.finished {
		s += ", Finished"
	}
	return s
}

// checkGoneJobs reports workloads holding quota whose job is gone and none
// of whose pods runs: nothing will give that quota back. jobExists says,
// per Workload, whether List found its job; a pod group's job is its pods.
// A Workload deleted less than grace ago is left to the manager, and a pod
// group whose reservation may be newer than the pods' list (podsAt, with
// a second for the condition's precision) is not judged by that list.
func checkGoneJobs(wls []*workload, pods []Pod, ix *podIndex, jobExists map[string]bool, grace time.Duration, now, podsAt time.Time) []Violation {
	podsOf := map[string][]*Pod{}
	for i := range pods {
		if name, _ := ix.workloadOf(&pods[i]); name != "" {
			podsOf[name] = append(podsOf[name], &pods[i])
		}
	}
	var out []Violation
	for _, w := range wls {
		if !w.holding() {
			continue
		}
		exists, known := jobExists[w.name]
		if !known && isGroup(w.obj) {
			exists, known = len(podsOf[w.name]) > 0, reservedBefore(w.obj, podsAt.Add(-time.Second))
		}
		if !known || exists {
			continue
		}
		running := false
		for _, p := range podsOf[w.name] {
			running = running || p.running()
		}
		if del := w.obj.DeletionTimestamp; running || (del != nil && now.Sub(del.Time) < grace) {
			continue
		}
		out = append(out, Violation{KindQuotaOfGoneJob, w.object(), fmt.Sprintf(
			"holds quota in ClusterQueue %s but its %s is gone", w.clusterQueue(), jobName(w.obj))})
	}
	return out
}

// reservedBefore: the Workload's quota was reserved before t.
func reservedBefore(wl *kueue.Workload, t time.Time) bool {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	return c != nil && c.Status == metav1.ConditionTrue && c.LastTransitionTime.Time.Before(t)
}

// isGroup: the Workload of a pod group, owned by its pods, none of which
// controls it.
func isGroup(wl *kueue.Workload) bool {
	return wl.Annotations[groupWorkloadAnnotation] == "true" && metav1.GetControllerOfNoCopy(wl) == nil
}

// jobName names a Workload's job: "Job j", "pod group g".
func jobName(wl *kueue.Workload) string {
	if isGroup(wl) {
		return "pod group " + wl.Name
	}
	if ref, ok := wlpkg.JobOf(wl); ok {
		return ref.GVK.Kind + " " + ref.Name
	}
	return "job"
}
