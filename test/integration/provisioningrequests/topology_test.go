package provisioningrequests

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/tas"
)

const rackLabel = "example.com/provisioned-rack"

// A job asking for one rack in a ClusterQueue whose TAS flavor has a
// ProvisioningRequest check reserves quota before any node of the flavor
// exists: its topology request waits (delayedTopologyRequest Pending).
// Once the request is provisioned the Workload stays not Admitted
// (PendingDelayedTopologyRequests) until the new nodes appear; then its
// pods are placed on them, the request turns Ready, and the Job starts.
func TestTopologyWaitsForProvisionedNodes(t *testing.T) {
	ctx := context.Background()
	c := start(t)
	create := func(objs ...client.Object) {
		t.Helper()
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil {
				t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
			}
			t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
		}
	}
	topo := kueue.TopologyReference("prov-topo")
	create(
		&kueue.Topology{ObjectMeta: metav1.ObjectMeta{Name: string(topo)}, Spec: kueue.TopologySpec{Levels: []kueue.TopologyLevel{
			{NodeLabel: rackLabel}, {NodeLabel: corev1.LabelHostname}}}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "prov-tas"}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"pool": "provisioned"}, TopologyName: &topo}},
		&kueue.ProvisioningRequestConfig{ObjectMeta: metav1.ObjectMeta{Name: "prov-tas-config"}, Spec: kueue.ProvisioningRequestConfigSpec{
			ProvisioningClassName: "check-capacity.autoscaling.x-k8s.io"}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov-tas-check"}, Spec: kueue.AdmissionCheckSpec{
			ControllerName: kueue.ProvisioningRequestControllerName,
			Parameters: &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "ProvisioningRequestConfig",
				Name: "prov-tas-config"}}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "prov-tas-cq"}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector:       &metav1.LabelSelector{},
			AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "prov-tas-check"}}},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "prov-tas", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU,
					NominalQuota: resource.MustParse("16")}}}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "prov-tas-lq"}, Spec: kueue.LocalQueueSpec{
			ClusterQueue: "prov-tas-cq"}},
	)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "prov-tas-job",
		Labels: map[string]string{jobframework.QueueNameLabel: "prov-tas-lq"}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To(int32(8)), Completions: ptr.To(int32(8)), Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{jobframework.PodSetRequiredTopologyAnnotation: rackLabel}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}
	create(job)

	var wl *kueue.Workload
	eventually(t, "the Workload reserves quota with its topology request waiting", func() error {
		var err error
		if wl, err = workloadOf(ctx, c, job); err != nil {
			return err
		}
		if wl.Status.Admission == nil {
			return fmt.Errorf("no admission yet: %+v", meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved))
		}
		psa := wl.Status.Admission.PodSetAssignments[0]
		if psa.TopologyAssignment != nil || ptr.Deref(psa.DelayedTopologyRequest, "") != kueue.DelayedTopologyRequestStatePending {
			return fmt.Errorf("pod set assignment %+v", psa)
		}
		return nil
	})
	pr := request(t, c, "default", wl.Name+"-prov-tas-check-1")
	setCondition(t, c, pr, autoscaling.Accepted, "")
	setCondition(t, c, pr, autoscaling.Provisioned, "capacity is available")
	eventually(t, "the check is Ready and the admission waits for the nodes", func() error {
		var err error
		if wl, err = workloadOf(ctx, c, job); err != nil {
			return err
		}
		if st := checkState(wl, "prov-tas-check"); st == nil || st.State != kueue.CheckStateReady {
			return fmt.Errorf("check %+v", st)
		}
		if cond := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); cond == nil ||
			cond.Reason != kueue.WorkloadReasonPendingDelayedTopology {
			return fmt.Errorf("Admitted %+v", cond)
		}
		return nil
	})
	if j := getJob(t, c, job); !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatal("the Job started before its pods were placed")
	}

	for _, name := range []string{"prov-r1-n1", "prov-r1-n2"} {
		provisionedNode(t, c, name, "r1")
	}
	eventually(t, "the pods are placed on the new nodes and the Job starts", func() error {
		var err error
		if wl, err = workloadOf(ctx, c, job); err != nil {
			return err
		}
		psa := wl.Status.Admission.PodSetAssignments[0]
		if ptr.Deref(psa.DelayedTopologyRequest, "") != kueue.DelayedTopologyRequestStateReady || psa.TopologyAssignment == nil {
			return fmt.Errorf("pod set assignment %+v", psa)
		}
		doms, err := tas.Domains(psa.TopologyAssignment)
		if err != nil {
			return err
		}
		total := int32(0)
		for _, d := range doms {
			total += d.Count
		}
		if total != 8 {
			return fmt.Errorf("placed %d pods, want 8: %+v", total, doms)
		}
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			return fmt.Errorf("not Admitted: %+v", meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted))
		}
		if ptr.Deref(getJob(t, c, job).Spec.Suspend, true) {
			return fmt.Errorf("the Job is still suspended")
		}
		return nil
	})
}

// provisionedNode creates a Ready node of the provisioned pool with 4 CPUs
// in rack, as cluster-autoscaler would.
func provisionedNode(t *testing.T, c client.Client, name, rack string) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pool": "provisioned", rackLabel: rack, corev1.LabelHostname: name}}}
	if err := c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), node) })
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}
	node.Status = corev1.NodeStatus{Allocatable: capacity, Capacity: capacity,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}}
	if err := c.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	// The API server taints a new node not-ready; with no node controller
	// here, the test lifts the taint as it would.
	node.Spec.Taints = nil
	if err := c.Update(ctx, node); err != nil {
		t.Fatal(err)
	}
}
