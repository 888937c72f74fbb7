package mkdispatch

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/multikueue"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// A Job queued in the manager cluster is copied to both workers as a
// Workload; the worker whose Kuota reserves quota first gets it: the other
// copy goes, the Job is created there and runs, its status is mirrored
// back, and when it completes the manager's Workload finishes and the
// worker's objects are deleted. A cluster whose Secret is missing says so
// and leaves the check active with the others.
func TestJobRunsInTheWorkerThatReservesFirst(t *testing.T) {
	ns := setup(t)
	startManager(t, manager)
	waitCheck(t, ns, multikueue.ReasonSomeActiveClusters)
	waitCluster(t, ns+"-broken", metav1.ConditionFalse, "BadKubeConfig")

	job := newJob(ns, "train", 2, "1")
	create(t, manager, job)
	wlKey := client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(job.Name, job.UID, batchjob.GVK)}
	for _, w := range []*framework.Env{worker1, worker2} {
		eventually(t, "a copy of the workload in each worker", func() error {
			var rw kueue.Workload
			if err := w.Client.Get(context.Background(), wlKey, &rw); err != nil {
				return err
			}
			if rw.Labels[kueue.MultiKueueOriginLabel] != "multikueue" {
				return fmt.Errorf("labels %v", rw.Labels)
			}
			return nil
		})
	}
	var wl kueue.Workload
	get(t, manager, wlKey, &wl)
	if wl.Status.ClusterName != nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
		t.Fatalf("admitted before a worker reserved quota: %+v", wl.Status)
	}

	startManager(t, worker1)
	eventually(t, "the workload is admitted in worker1", func() error {
		get(t, manager, wlKey, &wl)
		if ptr.Deref(wl.Status.ClusterName, "") != ns+"-worker1" {
			return fmt.Errorf("clusterName %v", wl.Status.ClusterName)
		}
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		return nil
	})
	eventually(t, "the copy in worker2 is deleted", func() error {
		var rw kueue.Workload
		if err := worker2.Client.Get(context.Background(), wlKey, &rw); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	var remote batchv1.Job
	eventually(t, "the job runs in worker1", func() error {
		if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(job), &remote); err != nil {
			return err
		}
		if remote.Labels[jobframework.PrebuiltWorkloadLabel] != wlKey.Name || remote.Spec.ManagedBy != nil {
			return fmt.Errorf("labels %v managedBy %v", remote.Labels, remote.Spec.ManagedBy)
		}
		if ptr.Deref(remote.Spec.Suspend, true) {
			return fmt.Errorf("suspended")
		}
		return nil
	})
	var local batchv1.Job
	eventually(t, "the manager's job is unsuspended (its own Job controller leaves it alone)", func() error {
		get(t, manager, client.ObjectKeyFromObject(job), &local)
		if ptr.Deref(local.Spec.Suspend, true) {
			return fmt.Errorf("suspended")
		}
		return nil
	})

	setRemoteStatus(t, client.ObjectKeyFromObject(job), func(st *batchv1.JobStatus) {
		now := metav1.Now()
		st.StartTime, st.Active, st.Ready = &now, 2, ptr.To[int32](2)
	})
	eventually(t, "the worker's status is mirrored", func() error {
		get(t, manager, client.ObjectKeyFromObject(job), &local)
		if local.Status.Active != 2 {
			return fmt.Errorf("active %d", local.Status.Active)
		}
		return nil
	})
	setRemoteStatus(t, client.ObjectKeyFromObject(job), func(st *batchv1.JobStatus) {
		now := metav1.Now()
		st.Active, st.Ready, st.Succeeded, st.CompletionTime = 0, ptr.To[int32](0), 2, &now
		st.Conditions = append(st.Conditions,
			batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now})
	})
	eventually(t, "the manager's workload finishes", func() error {
		get(t, manager, wlKey, &wl)
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	eventually(t, "the worker's job and workload are deleted", func() error {
		var rj batchv1.Job
		if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(job), &rj); err == nil && rj.DeletionTimestamp.IsZero() {
			return fmt.Errorf("job still there")
		}
		var rw kueue.Workload
		if err := worker1.Client.Get(context.Background(), wlKey, &rw); err == nil && rw.DeletionTimestamp.IsZero() {
			return fmt.Errorf("workload still there")
		}
		return nil
	})
}

// A workload evicted in the manager (here: deactivated) loses its copies
// and its job in the workers, its placement, and its mirrored running
// pods, so that its job is stopped.
func TestDeactivatedWorkloadIsRemovedFromItsWorker(t *testing.T) {
	ns := setup(t)
	startManager(t, manager)
	startManager(t, worker1)
	job := newJob(ns, "etl", 1, "1")
	create(t, manager, job)
	wlKey := client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(job.Name, job.UID, batchjob.GVK)}
	eventually(t, "the job runs in worker1", func() error {
		var rj batchv1.Job
		if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(job), &rj); err != nil {
			return err
		}
		if ptr.Deref(rj.Spec.Suspend, true) {
			return fmt.Errorf("suspended")
		}
		return nil
	})
	setRemoteStatus(t, client.ObjectKeyFromObject(job), func(st *batchv1.JobStatus) {
		now := metav1.Now()
		st.StartTime, st.Active, st.Ready = &now, 1, ptr.To[int32](1)
	})
	eventually(t, "the worker's status is mirrored", func() error {
		var local batchv1.Job
		get(t, manager, client.ObjectKeyFromObject(job), &local)
		if local.Status.Active != 1 {
			return fmt.Errorf("active %d", local.Status.Active)
		}
		return nil
	})
	var wl kueue.Workload
	get(t, manager, wlKey, &wl)
	wl.Spec.Active = ptr.To(false)
	if err := manager.Client.Update(context.Background(), &wl); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the worker's objects go and the manager's job stops", func() error {
		var rj batchv1.Job
		if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(job), &rj); err == nil && rj.DeletionTimestamp.IsZero() {
			return fmt.Errorf("remote job still there")
		}
		var local batchv1.Job
		get(t, manager, client.ObjectKeyFromObject(job), &local)
		if !ptr.Deref(local.Spec.Suspend, false) || local.Status.Active != 0 {
			return fmt.Errorf("manager's job suspend %v active %d", local.Spec.Suspend, local.Status.Active)
		}
		get(t, manager, wlKey, &wl)
		if wl.Status.ClusterName != nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			return fmt.Errorf("clusterName %v conditions %v", wl.Status.ClusterName, wl.Status.Conditions)
		}
		return nil
	})
}

// setup creates, under a fresh namespace name: in each worker the
// namespace, a flavor, a ClusterQueue with 4 cpu and LocalQueue "lq"; in
// the manager the same queues with a MultiKueue check over both workers
// (kubeconfig Secrets in kueue-system) and a third cluster whose Secret
// does not exist.
func setup(t *testing.T) string {
	t.Helper()
	return setupWith(t, worker1.KubeConfig(), worker2.KubeConfig())
}

// setupWith is setup with the kubeconfigs the manager reaches the two
// workers with.
func setupWith(t *testing.T, kubeconfigs ...[]byte) string {
	t.Helper()
	ns, err := manager.CreateNamespace(context.Background(), "mk")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*framework.Env{worker1, worker2} {
		create(t, w, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		create(t, w, queueObjects(ns, "")...)
	}
	ensureNamespace(t, manager, "kueue-system")
	clusters := []string{ns + "-worker1", ns + "-worker2", ns + "-broken"}
	for i := range 2 {
		create(t, manager, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: clusters[i]},
			Data: map[string][]byte{kueue.MultiKueueKubeConfigSecretKey: kubeconfigs[i]}})
	}
	for _, c := range clusters {
		create(t, manager, &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: c}, Spec: kueue.MultiKueueClusterSpec{
			ClusterSource: kueue.ClusterSource{KubeConfig: &kueue.KubeConfig{Location: c, LocationType: kueue.SecretLocationType}}}})
	}
	create(t, manager,
		&kueue.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: kueue.MultiKueueConfigSpec{Clusters: clusters}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: kueue.AdmissionCheckSpec{
			ControllerName: multikueue.ControllerName,
			Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "MultiKueueConfig", Name: ns}}})
	create(t, manager, queueObjects(ns, ns)...)
	return ns
}

// queueObjects are a flavor, a ClusterQueue of 4 cpu (with the check when
// not empty) and LocalQueue "lq".
func queueObjects(ns, check string) []client.Object {
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: ns + "-cq"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(ns + "-f"),
				Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("4")}}}}}}}}
	if check != "" {
		cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(check)}}}
	}
	return []client.Object{&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: ns + "-f"}}, cq,
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(ns + "-cq")}}}
}

// A copy in a worker whose Workload is gone from the manager is deleted;
// a Workload there that this manager did not create is left alone.
func TestOrphanCopiesAreDeleted(t *testing.T) {
	ns := setup(t)
	orphan := func(name string, labels map[string]string) *kueue.Workload {
		return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: kueue.DefaultPodSetName, Count: 1,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
	}
	mine := orphan("left-behind", map[string]string{kueue.MultiKueueOriginLabel: "multikueue"})
	theirs := orphan("someone-elses", nil)
	create(t, worker1, mine, theirs)
	startManager(t, manager)
	eventually(t, "the orphan copy is deleted", func() error {
		var rw kueue.Workload
		err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(mine), &rw)
		if apierrors.IsNotFound(err) || (err == nil && !rw.DeletionTimestamp.IsZero()) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	var rw kueue.Workload
	get(t, worker1, client.ObjectKeyFromObject(theirs), &rw)
	if !rw.DeletionTimestamp.IsZero() {
		t.Errorf("a Workload this manager did not create is being deleted")
	}
}

// A Workload of no job kind MultiKueue runs (here, one created alone) is
// rejected by the check, saying why, and nothing is copied to the workers.
func TestWorkloadWithoutAJobIsRejected(t *testing.T) {
	ns := setup(t)
	startManager(t, manager)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alone"},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: kueue.DefaultPodSetName, Count: 1,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}}}
	create(t, manager, wl)
	eventually(t, "the check rejects the workload", func() error {
		var got kueue.Workload
		get(t, manager, client.ObjectKeyFromObject(wl), &got)
		for _, st := range got.Status.AdmissionChecks {
			if st.State == kueue.CheckStateRejected && strings.Contains(st.Message, "does not belong to a job") {
				return nil
			}
		}
		return fmt.Errorf("checks %+v", got.Status.AdmissionChecks)
	})
	var rw kueue.Workload
	if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), &rw); !apierrors.IsNotFound(err) {
		t.Errorf("copied to a worker (%v)", err)
	}
}
