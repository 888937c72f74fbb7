package jobs

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// current is the manager the running test started last.
var current *framework.Manager

func startManager(t *testing.T, mutate ...func(*configapi.Configuration)) {
	t.Helper()
	cfg, err := framework.ManagerConfig(mutate...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.StartManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	current = m
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// queues creates a namespace, a flavor with a node label, a ClusterQueue
// with cpu quota and preemption of lower priorities, and LocalQueue "lq".
func queues(t *testing.T, nominal string) (ns, cq, fl string) {
	t.Helper()
	ns, err := env.CreateNamespace(context.Background(), "j")
	if err != nil {
		t.Fatal(err)
	}
	cq, fl = ns+"-cq", ns+"-f"
	create(t,
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels:  map[string]string{"pool": fl},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: fl, Effect: corev1.TaintEffectNoSchedule}}}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			Preemption:        &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl),
					Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(nominal)}}}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}},
	)
	return ns, cq, fl
}

// newJob builds a suspended Job, as the webhook leaves one, with
// parallelism pods of cpu each.
func newJob(ns, name, queue string, parallelism int32, cpu string) *batchv1.Job {
	labels := map[string]string{}
	if queue != "" {
		labels[jobframework.QueueNameLabel] = queue
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism), Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			}},
		},
	}
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not true after 45s: %v", what, err)
}

func getJob(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	var j batchv1.Job
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &j); err != nil {
		t.Fatal(err)
	}
	return &j
}

// workloadOf returns the Job's Workload, or nil.
func workloadOf(t *testing.T, j *batchv1.Job) *kueue.Workload {
	t.Helper()
	var wl kueue.Workload
	key := client.ObjectKey{Namespace: j.Namespace, Name: jobframework.WorkloadName(j.Name, j.UID, batchjob.GVK)}
	if err := env.Client.Get(context.Background(), key, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return &wl
}

// waitRunning waits until the Job runs with its flavor's node label.
func waitRunning(t *testing.T, ns, name, fl string) *batchv1.Job {
	t.Helper()
	var j *batchv1.Job
	eventually(t, "job "+name+" started on flavor "+fl, func() error {
		j = getJob(t, ns, name)
		if ptr.Deref(j.Spec.Suspend, false) {
			return fmt.Errorf("still suspended")
		}
		if j.Spec.Template.Spec.NodeSelector["pool"] != fl {
			return fmt.Errorf("node selector %v", j.Spec.Template.Spec.NodeSelector)
		}
		return nil
	})
	return j
}

// setJobStatus writes Job status as the Job controller would.
func setJobStatus(t *testing.T, ns, name string, mutate func(*batchv1.JobStatus)) {
	t.Helper()
	eventually(t, "job "+name+" status written", func() error {
		j := getJob(t, ns, name)
		mutate(&j.Status)
		return env.Client.Status().Update(context.Background(), j)
	})
}

// complete marks a Job as done, with the conditions the API requires.
func complete(t *testing.T, ns, name string) {
	t.Helper()
	setJobStatus(t, ns, name, func(st *batchv1.JobStatus) {
		now := metav1.Now()
		if st.StartTime == nil {
			st.StartTime = &now
		}
		st.Active, st.Ready, st.Succeeded = 0, ptr.To[int32](0), 1
		st.CompletionTime = &now
		st.Conditions = append(st.Conditions,
			batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now})
	})
}

// condition returns a condition of the Workload; nil when the Workload
// does not exist (yet).
func condition(wl *kueue.Workload, typ string) *metav1.Condition {
	if wl == nil {
		return nil
	}
	return meta.FindStatusCondition(wl.Status.Conditions, typ)
}

func objectKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// afterCycles waits for three more scheduling cycles, calling check after
// each; it fails the test at check's first error.
func afterCycles(t *testing.T, check func() error) {
	t.Helper()
	if err := current.WaitCycles(3, 10*time.Second, check); err != nil {
		t.Fatal(err)
	}
}
