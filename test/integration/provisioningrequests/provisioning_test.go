package provisioningrequests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1 "k8s.io/api/batch/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/provisioning"
)

// Kueue's provisioning example, unchanged: the check turns active, the
// sample Job's Workload reserves quota, a ProvisioningRequest asks for its
// three GPU pods with the Job's maxRunDurationSeconds, and once the
// request is provisioned the Job starts with pods that consume it.
func TestKueueProvisioningExample(t *testing.T) {
	ctx := context.Background()
	c := start(t)
	for _, u := range example(t, "provisioning-setup.yaml", kueue.GroupVersion.Group) {
		if err := c.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), u) })
	}
	eventually(t, "AdmissionCheck sample-prov is active", func() error {
		cond, err := activeCondition(ctx, c, "sample-prov")
		if err != nil {
			return err
		}
		if cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("Active=%s: %s", cond.Status, cond.Message)
		}
		return nil
	})
	job := exampleJob(t, "default")
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})

	var wl *kueue.Workload
	eventually(t, "the Workload reserves quota and waits for its check", func() error {
		var err error
		if wl, err = workloadOf(ctx, c, job); err != nil {
			return err
		}
		if st := checkState(wl, "sample-prov"); st == nil || st.State != kueue.CheckStatePending {
			return fmt.Errorf("check state %+v", st)
		}
		return nil
	})
	pr := request(t, c, "default", wl.Name+"-sample-prov-1")
	if pr.Spec.ProvisioningClassName != "check-capacity.autoscaling.x-k8s.io" {
		t.Errorf("class %q", pr.Spec.ProvisioningClassName)
	}
	if pr.Spec.Parameters["maxRunDurationSeconds"] != "600" {
		t.Errorf("the Job's provreq annotation must be a parameter: %v", pr.Spec.Parameters)
	}
	if pr.Labels[jobframework.ManagedLabel] != "true" || !metav1.IsControlledBy(pr, wl) {
		t.Errorf("the request must be labelled and controlled by the Workload: %+v", pr.ObjectMeta)
	}
	if len(pr.Spec.PodSets) != 1 || pr.Spec.PodSets[0].Count != 3 {
		t.Fatalf("want one pod set of 3 pods, got %+v", pr.Spec.PodSets)
	}
	var tmpl corev1.PodTemplate
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: pr.Spec.PodSets[0].PodTemplateRef.Name}, &tmpl); err != nil {
		t.Fatalf("the request's PodTemplate: %v", err)
	}
	ctr := tmpl.Template.Spec.Containers[0]
	if ctr.Image == "" || !ctr.Resources.Requests["nvidia.com/gpu"].Equal(resource.MustParse("1")) || len(tmpl.Template.Spec.Tolerations) == 0 {
		t.Errorf("the PodTemplate must be the Job's pod: %+v", tmpl.Template.Spec)
	}
	if job := getJob(t, c, job); !ptr.Deref(job.Spec.Suspend, false) {
		t.Fatal("the Job started before its capacity was provisioned")
	}

	setCondition(t, c, pr, autoscaling.Accepted, "")
	setCondition(t, c, pr, autoscaling.Provisioned, "capacity is available")
	eventually(t, "the Job starts with pods that consume the request", func() error {
		j := getJob(t, c, job)
		if ptr.Deref(j.Spec.Suspend, true) {
			return fmt.Errorf("still suspended")
		}
		a := j.Spec.Template.Annotations
		if a[provisioning.ConsumeAnnotation] != pr.Name || a[provisioning.ClassAnnotation] != "check-capacity.autoscaling.x-k8s.io" {
			return fmt.Errorf("pod template annotations %v", a)
		}
		return nil
	})
	wl, err := workloadOf(ctx, c, job)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
		t.Errorf("the Workload is not Admitted: %+v", wl.Status.Conditions)
	}
}

// A failed request is retried as a new attempt after the Workload gives its
// quota back; once the retries are used up the check rejects the Workload,
// which is deactivated, and its requests are deleted.
func TestFailedRequestsAreRetriedThenRejected(t *testing.T) {
	ctx := context.Background()
	c := start(t)
	ns, err := env.CreateNamespace(ctx, "prov")
	if err != nil {
		t.Fatal(err)
	}
	check := ns + "-check"
	for _, o := range []client.Object{
		&kueue.ProvisioningRequestConfig{ObjectMeta: metav1.ObjectMeta{Name: ns + "-cfg"}, Spec: kueue.ProvisioningRequestConfigSpec{
			ProvisioningClassName: "queued-provisioning.gke.io",
			RetryStrategy: &kueue.ProvisioningRequestRetryStrategy{BackoffLimitCount: ptr.To[int32](1),
				BackoffBaseSeconds: ptr.To[int32](0), BackoffMaxSeconds: ptr.To[int32](0)}}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: check}, Spec: kueue.AdmissionCheckSpec{
			ControllerName: provisioning.ControllerName,
			Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "ProvisioningRequestConfig", Name: ns + "-cfg"}}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: ns + "-f"}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: ns + "-cq"}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu", "memory", "nvidia.com/gpu"},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(ns + "-f"), Resources: []kueue.ResourceQuota{
					{Name: "cpu", NominalQuota: resource.MustParse("9")}, {Name: "memory", NominalQuota: resource.MustParse("36Gi")},
					{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("9")}}}}}},
			AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(check)}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user-queue"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(ns + "-cq")}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	job := exampleJob(t, ns)
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	var wl *kueue.Workload
	eventually(t, "the Workload reserves quota", func() error {
		var err error
		wl, err = workloadOf(ctx, c, job)
		if err == nil && checkState(wl, check) == nil {
			err = fmt.Errorf("no check state yet")
		}
		return err
	})
	first := request(t, c, ns, wl.Name+"-"+check+"-1")
	setCondition(t, c, first, autoscaling.Failed, "out of stock")
	second := request(t, c, ns, wl.Name+"-"+check+"-2")
	eventually(t, "the first attempt's request is deleted", func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(first), &autoscaling.ProvisioningRequest{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
	setCondition(t, c, second, autoscaling.Failed, "out of stock again")
	eventually(t, "the check rejects the Workload and it is deactivated", func() error {
		cur, err := workloadOf(ctx, c, job)
		if err != nil {
			return err
		}
		st := checkState(cur, check)
		if st == nil || st.State != kueue.CheckStateRejected || !strings.Contains(st.Message, "out of stock again") {
			return fmt.Errorf("check state %+v", st)
		}
		if ptr.Deref(cur.Spec.Active, true) {
			return fmt.Errorf("still active")
		}
		return nil
	})
	eventually(t, "the rejected Workload's request is deleted", func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(second), &autoscaling.ProvisioningRequest{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
	if j := getJob(t, c, job); !ptr.Deref(j.Spec.Suspend, false) {
		t.Error("the rejected Job runs")
	}
}

// A check naming a config that does not exist is inactive, with the
// reason Kueue gives, until the config is created.
func TestCheckWithoutItsConfigIsInactive(t *testing.T) {
	ctx := context.Background()
	c := start(t)
	name := "prov-missing-config"
	ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.AdmissionCheckSpec{
		ControllerName: provisioning.ControllerName,
		Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "ProvisioningRequestConfig", Name: name}}}
	if err := c.Create(ctx, ac); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the check is inactive for a bad reference", func() error {
		cond, err := activeCondition(ctx, c, name)
		if err != nil {
			return err
		}
		if cond.Status != metav1.ConditionFalse || cond.Reason != provisioning.ReasonBadParametersRef || !strings.Contains(cond.Message, name) {
			return fmt.Errorf("Active=%s %s: %s", cond.Status, cond.Reason, cond.Message)
		}
		return nil
	})
	if err := c.Create(ctx, &kueue.ProvisioningRequestConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ProvisioningRequestConfigSpec{ProvisioningClassName: "check-capacity.autoscaling.x-k8s.io"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the check turns active once its config exists", func() error {
		cond, err := activeCondition(ctx, c, name)
		if err != nil {
			return err
		}
		if cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("Active=%s %s: %s", cond.Status, cond.Reason, cond.Message)
		}
		return nil
	})
}

func getJob(t *testing.T, c client.Client, job *batchv1.Job) *batchv1.Job {
	t.Helper()
	var j batchv1.Job
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(job), &j); err != nil {
		t.Fatal(err)
	}
	return &j
}
