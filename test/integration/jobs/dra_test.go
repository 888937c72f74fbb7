package jobs

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// Kueue's DRA example, unchanged (queues with 8 example.com/gpu, a
// ResourceClaimTemplate asking for one device of class gpu.example.com,
// and a Job whose pod claims it), with the deviceClassMappings its page
// configures: the Job waits while its template does not exist, then is
// admitted and charged one example.com/gpu; a Job claiming 8 more waits
// for the quota until the first completes.
func TestDRAClaimsAreChargedToQuota(t *testing.T) {
	startManager(t, func(c *configapi.Configuration) {
		c.Resources = &configapi.Resources{DeviceClassMappings: []configapi.DeviceClassMapping{
			{Name: "example.com/gpu", DeviceClassNames: []corev1.ResourceName{"gpu.example.com"}}}}
	})
	ns := "default"
	examples := map[string][]testutil.Example{}
	for _, group := range []string{kueue.GroupVersion.Group, "resource.k8s.io", "batch"} {
		for _, e := range testutil.KueueExamples(t, group, func(string) bool { return true }) {
			if e.File == "dra/sample-dra-queues.yaml" || e.File == "dra/sample-dra-rct-job.yaml" {
				examples[group] = append(examples[group], e)
			}
		}
	}
	if len(examples[kueue.GroupVersion.Group]) != 3 || len(examples["resource.k8s.io"]) != 1 || len(examples["batch"]) != 1 {
		t.Fatalf("Kueue's DRA example changed: %v", examples)
	}
	for _, e := range examples[kueue.GroupVersion.Group] {
		create(t, e.Obj)
		obj := e.Obj
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	var job batchv1.Job
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(examples["batch"][0].Obj.Object, &job); err != nil {
		t.Fatal(err)
	}
	job.GenerateName, job.Name = "", "dra-one"
	create(t, &job)
	t.Cleanup(func() { deleteJob(job.Namespace, job.Name) })
	waitPendingReason(t, ns, "dra-one", "Inadmissible", "ResourceClaimTemplate single-gpu of claim gpu does not exist")

	rct := examples["resource.k8s.io"][0].Obj
	create(t, rct)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), rct) })
	waitCharged(t, ns, "dra-one", "1")

	eight := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "eight-gpus"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 8}}}}}}}
	create(t, eight)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), eight) })
	big := job.DeepCopy()
	big.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "dra-eight", Labels: job.Labels}
	big.Spec.Suspend = nil
	big.Spec.Selector, big.Spec.Template.Labels = nil, nil
	big.Spec.Template.Spec.ResourceClaims[0].ResourceClaimTemplateName = ptr.To("eight-gpus")
	create(t, big)
	t.Cleanup(func() { deleteJob(big.Namespace, big.Name) })
	waitPendingReason(t, ns, "dra-eight", "WaitingForQuota", "example.com/gpu")
	complete(t, ns, "dra-one")
	waitCharged(t, ns, "dra-eight", "8")
}

// waitCharged waits until a Job runs with its Workload charged the given
// number of example.com/gpu.
func waitCharged(t *testing.T, ns, name, gpus string) {
	t.Helper()
	eventually(t, "Job "+name+" admitted with "+gpus+" example.com/gpu", func() error {
		j := getJob(t, ns, name)
		if ptr.Deref(j.Spec.Suspend, false) {
			return fmt.Errorf("still suspended")
		}
		wl := workloadOf(t, j)
		if wl == nil || wl.Status.Admission == nil {
			return fmt.Errorf("no admission")
		}
		got := wl.Status.Admission.PodSetAssignments[0].ResourceUsage["example.com/gpu"]
		if !got.Equal(resource.MustParse(gpus)) {
			return fmt.Errorf("charged %s example.com/gpu, usage %v", got.String(), wl.Status.Admission.PodSetAssignments[0].ResourceUsage)
		}
		return nil
	})
}

// deleteJob deletes a Job and its pods' records in the background.
func deleteJob(ns, name string) {
	_ = env.Client.Delete(context.Background(), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.PropagationPolicy(metav1.DeletePropagationBackground))
}
