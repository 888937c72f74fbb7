package app

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/intern"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// The manager's informers keep every object it watches in memory, and a
// Workload is mostly what the manager never reads: the server-side-apply
// bookkeeping (managedFields) and, in its pod templates, images, commands,
// environment, volumes and probes. The cache keeps what is read: for
// every object its metadata without managedFields and the
// last-applied-configuration annotation; for a Workload's pod templates,
// each container's name and resources (init containers with their restart
// policy), the node selector, tolerations, affinity, priority class,
// runtime class and overhead: what quota, flavor assignment and the
// jobframework's comparison of pod sets use; for a finished Workload, less
// (trimFinished). Equal resource lists of different Workloads are one
// shared map, and so are equal trimmed containers, pod sets and label maps
// (sharedValues); their repeated strings are one shared copy
// (intern.Table). Nothing written back comes
// from a trimmed object: the manager writes Workloads with server-side
// apply of status, and with patches of the fields it changes.

// lastApplied is kubectl's client-side apply annotation.
const lastApplied = corev1.LastAppliedConfigAnnotation

// cacheOptions trims what the manager caches.
func cacheOptions() ctrlcache.Options {
	t := newTrimmer()
	return ctrlcache.Options{
		DefaultTransform: trimMeta,
		ByObject: map[client.Object]ctrlcache.ByObject{
			&kueue.Workload{}: {Transform: t.workload},
			&corev1.Pod{}:     managedPods(),
		},
	}
}

// trimMeta drops managedFields and the last-applied annotation.
func trimMeta(obj any) (any, error) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return tomb, nil
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a != nil {
			if _, ok := a[lastApplied]; ok {
				delete(a, lastApplied)
				m.SetAnnotations(a)
			}
		}
	}
	return obj, nil
}

// trimmer trims the Workloads of one cache; equal values and repeated
// strings of its Workloads are shared.
type trimmer struct {
	lists      *sharedValues[corev1.ResourceList]
	containers *sharedValues[[]corev1.Container]
	podSets    *sharedValues[[]kueue.PodSet]
	labels     *sharedValues[map[string]string]
	strings    *intern.Table
}

func newTrimmer() *trimmer {
	return &trimmer{lists: newSharedLists(), containers: newSharedContainers(), podSets: newSharedPodSets(),
		labels: newSharedLabels(), strings: intern.New()}
}

// workload is trimMeta plus the pod templates cut to what is read.
func (t *trimmer) workload(obj any) (any, error) {
	obj, _ = trimMeta(obj)
	wl, ok := obj.(*kueue.Workload)
	if !ok {
		return obj, nil
	}
	if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
		trimFinished(wl)
		t.shareStrings(wl)
		return wl, nil
	}
	t.shareStrings(wl)
	wl.Labels = t.labels.share(wl.Labels)
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		ps.Name = kueue.PodSetReference(t.strings.Share(string(ps.Name)))
		t.trimPodSpec(&ps.Template.Spec)
	}
	wl.Spec.PodSets = t.podSets.share(wl.Spec.PodSets)
	for i := range wl.Status.ResourceRequests {
		rr := &wl.Status.ResourceRequests[i]
		rr.Resources = t.lists.share(rr.Resources)
	}
	if a := wl.Status.Admission; a != nil {
		for i := range a.PodSetAssignments {
			psa := &a.PodSetAssignments[i]
			psa.ResourceUsage = t.lists.share(psa.ResourceUsage)
		}
	}
	return wl, nil
}

// trimFinished cuts what nothing reads once a Workload is over; the cache
// holds every finished Workload until it is deleted, so this is most of
// the manager's memory on a busy cluster. A finished Workload is read
// for its Finished condition, its metadata (finalizers, owners, the
// owner annotations) and its queue: the job reconcilers (plain pods,
// groups and LeaderWorkerSets too) do nothing with it but drop its
// finalizer with a patch of the finalizers alone, the lifecycle places it
// as gone on its Finished condition before anything else, metrics take
// its ClusterQueue from the reservation it held, and the cache keys the
// runtime history by the copy that held the quota. So the copy keeps of
// its status the Finished condition, the admission's ClusterQueue and
// the admission checks' states; of its labels the job-uid label of an
// orphan (the job index reads it); and no pod sets (a PodSet is 864
// bytes even with an empty template). The copy is marked, and the apply
// Writer refuses a status write from it.
func trimFinished(wl *kueue.Workload) {
	wl.Spec.PodSets = nil
	wl.Labels = finishedLabels(wl)
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c != nil {
		wl.Status.Conditions = []metav1.Condition{*c}
	}
	if a := wl.Status.Admission; a != nil {
		wl.Status.Admission = &kueue.Admission{ClusterQueue: a.ClusterQueue}
	}
	wl.Status.ResourceRequests = nil
	for i := range wl.Status.AdmissionChecks {
		wl.Status.AdmissionChecks[i].PodSetUpdates = nil
	}
	apply.MarkTrimmed(wl)
}

// finishedLabels keeps the job-uid label of a Workload without owners
// (its job was deleted with orphan propagation): jobframework's job
// index reads it. Other labels of a finished Workload are not read.
func finishedLabels(wl *kueue.Workload) map[string]string {
	uid, ok := wl.Labels[jobframework.JobUIDLabel]
	if !ok || len(wl.OwnerReferences) > 0 {
		return nil
	}
	if len(wl.Labels) == 1 {
		return wl.Labels
	}
	return map[string]string{jobframework.JobUIDLabel: uid}
}

func (t *trimmer) trimPodSpec(spec *corev1.PodSpec) {
	keep := func(cs []corev1.Container) []corev1.Container {
		if cs == nil {
			return nil
		}
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: t.strings.Share(c.Name), Resources: t.resources(c.Resources), RestartPolicy: c.RestartPolicy}
		}
		return t.containers.share(out)
	}
	*spec = corev1.PodSpec{
		Containers:        keep(spec.Containers),
		InitContainers:    keep(spec.InitContainers),
		NodeSelector:      spec.NodeSelector,
		Tolerations:       spec.Tolerations,
		Affinity:          spec.Affinity,
		PriorityClassName: t.strings.Share(spec.PriorityClassName),
		Priority:          spec.Priority,
		RuntimeClassName:  spec.RuntimeClassName,
		Overhead:          t.lists.share(spec.Overhead),
		RestartPolicy:     spec.RestartPolicy,
		SchedulingGates:   spec.SchedulingGates,
		ResourceClaims:    spec.ResourceClaims,
		Resources:         spec.Resources,
	}
	if r := spec.Resources; r != nil {
		shared := t.resources(*r)
		spec.Resources = &shared
	}
}

func (t *trimmer) resources(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	r.Requests = t.lists.share(r.Requests)
	r.Limits = t.lists.share(r.Limits)
	return r
}

// shareStrings points the Workload's repeated strings (intern.Table) to
// the cache's shared copies; a finished one is trimmed first, so what it
// drops never reaches the table.
func (t *trimmer) shareStrings(wl *kueue.Workload) {
	s := t.strings.Share
	wl.Namespace = s(wl.Namespace)
	for i := range wl.Finalizers {
		wl.Finalizers[i] = s(wl.Finalizers[i])
	}
	for i := range wl.OwnerReferences {
		o := &wl.OwnerReferences[i]
		o.APIVersion, o.Kind = s(o.APIVersion), s(o.Kind)
	}
	wl.Spec.QueueName = kueue.LocalQueueName(s(string(wl.Spec.QueueName)))
	if r := wl.Spec.PriorityClassRef; r != nil {
		r.Name = s(r.Name)
	}
	for i := range wl.Status.Conditions {
		c := &wl.Status.Conditions[i]
		c.Type, c.Reason, c.Message = s(c.Type), s(c.Reason), s(c.Message)
	}
	if a := wl.Status.Admission; a != nil {
		a.ClusterQueue = kueue.ClusterQueueReference(s(string(a.ClusterQueue)))
		for i := range a.PodSetAssignments {
			psa := &a.PodSetAssignments[i]
			psa.Name = kueue.PodSetReference(s(string(psa.Name)))
		}
	}
	for i := range wl.Status.AdmissionChecks {
		c := &wl.Status.AdmissionChecks[i]
		c.Name = kueue.AdmissionCheckReference(s(string(c.Name)))
		c.State = kueue.CheckState(s(string(c.State)))
		c.Message = s(c.Message)
	}
	for i := range wl.Status.ResourceRequests {
		r := &wl.Status.ResourceRequests[i]
		r.Name = kueue.PodSetReference(s(string(r.Name)))
	}
}
