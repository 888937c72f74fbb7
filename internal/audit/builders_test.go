package audit

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// testNow is the clock of every test.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type wlOpt func(*kueue.Workload)

// newWorkload returns a Workload in namespace "ns" with one PodSet "main" of
// count pods.
func newWorkload(name string, count int32, opts ...wlOpt) *kueue.Workload {
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec: kueue.WorkloadSpec{
			QueueName: "lq",
			PodSets:   []kueue.PodSet{{Name: kueue.DefaultPodSetName, Count: count}},
		},
	}
	for _, o := range opts {
		o(wl)
	}
	return wl
}

// usage is resource name -> quantity, e.g. {"cpu": "4"}.
type usage map[corev1.ResourceName]string

// withAdmission sets status.admission: the whole PodSet in cq, every
// resource on flavor.
func withAdmission(cq, flavor string, count int32, u usage) wlOpt {
	return func(wl *kueue.Workload) {
		psa := kueue.PodSetAssignment{
			Name:          kueue.DefaultPodSetName,
			Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{},
			ResourceUsage: corev1.ResourceList{},
			Count:         ptr.To(count),
		}
		for r, q := range u {
			psa.Flavors[r] = kueue.ResourceFlavorReference(flavor)
			psa.ResourceUsage[r] = resource.MustParse(q)
		}
		wl.Status.Admission = &kueue.Admission{
			ClusterQueue:      kueue.ClusterQueueReference(cq),
			PodSetAssignments: []kueue.PodSetAssignment{psa},
		}
	}
}

func withCondition(condType string, status metav1.ConditionStatus, at time.Time) wlOpt {
	return func(wl *kueue.Workload) {
		wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{
			Type: condType, Status: status, Reason: "Test", LastTransitionTime: metav1.NewTime(at),
		})
	}
}

// reserving is a workload holding a reservation in cq on flavor.
func reserving(cq, flavor string, count int32, u usage) wlOpt {
	return func(wl *kueue.Workload) {
		withAdmission(cq, flavor, count, u)(wl)
		withCondition(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, testNow.Add(-time.Hour))(wl)
	}
}

// admitted is a reserving workload that is also admitted.
func admitted(cq, flavor string, count int32, u usage) wlOpt {
	return func(wl *kueue.Workload) {
		reserving(cq, flavor, count, u)(wl)
		withCondition(kueue.WorkloadAdmitted, metav1.ConditionTrue, testNow.Add(-time.Hour))(wl)
	}
}

func finished(at time.Time) wlOpt {
	return withCondition(kueue.WorkloadFinished, metav1.ConditionTrue, at)
}

func ownedBy(kind, name string, uid types.UID) wlOpt {
	return func(wl *kueue.Workload) {
		wl.OwnerReferences = append(wl.OwnerReferences, metav1.OwnerReference{
			APIVersion: "batch/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true),
		})
	}
}

func jobUID(uid string) wlOpt {
	return func(wl *kueue.Workload) {
		if wl.Labels == nil {
			wl.Labels = map[string]string{}
		}
		wl.Labels[JobUIDLabel] = uid
	}
}

func reclaimable(n int32) wlOpt {
	return func(wl *kueue.Workload) {
		wl.Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: kueue.DefaultPodSetName, Count: n}}
	}
}

// deleting marks the workload deleted at `at`, with the resource-in-use finalizer.
func deleting(at time.Time) wlOpt {
	return func(wl *kueue.Workload) {
		wl.DeletionTimestamp = ptr.To(metav1.NewTime(at))
		wl.Finalizers = append(wl.Finalizers, kueue.ResourceInUseFinalizerName)
	}
}

// quota is one flavor/resource quota; bl and ll are "" when unset.
type quota struct {
	flavor  string
	res     corev1.ResourceName
	nominal string
	bl, ll  string
}

func resourceGroups(quotas []quota) []kueue.ResourceGroup {
	var groups []kueue.ResourceGroup
	for _, q := range quotas {
		rq := kueue.ResourceQuota{Name: q.res, NominalQuota: resource.MustParse(q.nominal)}
		if q.bl != "" {
			rq.BorrowingLimit = ptr.To(resource.MustParse(q.bl))
		}
		if q.ll != "" {
			rq.LendingLimit = ptr.To(resource.MustParse(q.ll))
		}
		groups = append(groups, kueue.ResourceGroup{
			CoveredResources: []corev1.ResourceName{q.res},
			Flavors: []kueue.FlavorQuotas{{
				Name: kueue.ResourceFlavorReference(q.flavor), Resources: []kueue.ResourceQuota{rq},
			}},
		})
	}
	return groups
}

func newClusterQueue(name, cohort string, quotas ...quota) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ClusterQueueSpec{
			CohortName:        kueue.CohortReference(cohort),
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups:    resourceGroups(quotas),
		},
	}
}

func newCohort(name, parent string, quotas ...quota) *kueue.Cohort {
	return &kueue.Cohort{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       kueue.CohortSpec{ParentName: kueue.CohortReference(parent), ResourceGroups: resourceGroups(quotas)},
	}
}

// flavorUsage builds status usage for one flavor.
func flavorUsage(flavor string, u usage) []kueue.FlavorUsage {
	fu := kueue.FlavorUsage{Name: kueue.ResourceFlavorReference(flavor)}
	for r, q := range u {
		fu.Resources = append(fu.Resources, kueue.ResourceUsage{Name: r, Total: resource.MustParse(q)})
	}
	return []kueue.FlavorUsage{fu}
}

// withStatus sets a ClusterQueue's usage status.
func withStatus(cq *kueue.ClusterQueue, reservation, used []kueue.FlavorUsage, reservingN, admittedN int32) *kueue.ClusterQueue {
	cq.Status.FlavorsReservation = reservation
	cq.Status.FlavorsUsage = used
	cq.Status.ReservingWorkloads = reservingN
	cq.Status.AdmittedWorkloads = admittedN
	return cq
}

func newFlavor(name string) *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// objects collects typed objects into Objects.
func objects(items ...any) *Objects {
	o := &Objects{}
	for _, it := range items {
		switch v := it.(type) {
		case *kueue.Workload:
			o.Workloads = append(o.Workloads, *v)
		case *kueue.ClusterQueue:
			o.ClusterQueues = append(o.ClusterQueues, *v)
		case *kueue.Cohort:
			o.Cohorts = append(o.Cohorts, *v)
		case *kueue.ResourceFlavor:
			o.ResourceFlavors = append(o.ResourceFlavors, *v)
		case *corev1.Pod:
			o.PodsListed = true
			if p, ok := podOf(v); ok {
				o.Pods = append(o.Pods, p)
			}
		default:
			panic("unexpected object")
		}
	}
	return o
}

func check(objs *Objects) *Report {
	return Check(objs, Options{Now: func() time.Time { return testNow }})
}

type podOpt func(*corev1.Pod)

// newPod returns a pod in namespace "ns", scheduled on node "n1" and
// running, with no labels.
func newPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// ofWorkload: a pod of an admitted template, naming its Workload.
func ofWorkload(name string) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[workloadAnnotation] = name
	}
}

func podLabel(key, value string) podOpt {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[key] = value
	}
}

// managed: a pod the pod integration queues.
func managed() podOpt { return podLabel(managedLabel, "true") }

// inGroup: a managed pod of group g.
func inGroup(g string) podOpt {
	return func(p *corev1.Pod) {
		managed()(p)
		podLabel(groupLabel, g)(p)
	}
}

// pending: not scheduled; gated when gated is true.
func pending(gated bool) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.NodeName, p.Status.Phase = "", corev1.PodPending
		if gated {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/admission"}}
		}
	}
}

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func podDeleting() podOpt {
	return func(p *corev1.Pod) {
		p.DeletionTimestamp = ptr.To(metav1.NewTime(testNow.Add(-time.Minute)))
		p.Finalizers = []string{"test"}
	}
}

func wlAnnotation(key, value string) wlOpt {
	return func(wl *kueue.Workload) {
		if wl.Annotations == nil {
			wl.Annotations = map[string]string{}
		}
		wl.Annotations[key] = value
	}
}

// ownedByPod: a plain pod's Workload, controlled by the pod.
func ownedByPod(name string) wlOpt {
	return func(wl *kueue.Workload) {
		wl.OwnerReferences = append(wl.OwnerReferences, metav1.OwnerReference{
			APIVersion: "v1", Kind: "Pod", Name: name, UID: types.UID("uid-" + name), Controller: ptr.To(true),
		})
	}
}

// checkAt audits with the pod grace given.
func checkAt(objs *Objects, podGrace time.Duration) *Report {
	return Check(objs, Options{PodGrace: podGrace, Now: func() time.Time { return testNow }})
}
