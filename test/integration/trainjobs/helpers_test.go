package trainjobs

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/trainjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testutil.Eventually(t, 45*time.Second, 50*time.Millisecond, what, cond)
}

// startManager runs a manager with the TrainJob integration only.
func startManager(t *testing.T) *framework.Manager {
	t.Helper()
	cfg, err := framework.ManagerConfig(func(cfg *configapi.Configuration) {
		cfg.Integrations = &configapi.Integrations{Frameworks: []string{trainjob.FrameworkName}}
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.StartManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
	return m
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
}

// queues creates a namespace, a flavor with a node label and a
// toleration, a ClusterQueue of nominal cpu that preempts lower
// priorities, LocalQueue "lq", and WorkloadPriorityClasses low and high.
func queues(t *testing.T, nominal string) (ns, fl string) {
	t.Helper()
	ns, err := env.CreateNamespace(context.Background(), "tj")
	if err != nil {
		t.Fatal(err)
	}
	create(t, framework.Queues{Nominal: framework.CPU(nominal), LocalQueues: []string{"lq"},
		Priorities: map[string]int32{"low": 10, "high": 100}}.Objects(ns)...)
	return ns, framework.FlavorName(ns)
}

// runtimeObject is a training runtime like the trainer's torch one: a
// trainer "node" job whose "node" container asks for 1 cpu, one node by
// default. ns "" makes a ClusterTrainingRuntime.
func runtimeObject(ns, name string) *unstructured.Unstructured {
	kind := trainjob.ClusterTrainingRuntimeGVK
	if ns != "" {
		kind = trainjob.TrainingRuntimeGVK
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"mlPolicy": map[string]any{"numNodes": int64(1), "torch": map[string]any{}},
			"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{map[string]any{
				"name": "node", "replicas": int64(1),
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{trainjob.AncestorLabel: trainjob.AncestorTrainer}},
					"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
						"restartPolicy": "Never",
						"containers": []any{map[string]any{"name": "node", "image": "trainer",
							"resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}},
					}}},
				},
			}}}},
		},
	}}
	u.SetGroupVersionKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// newTrainJob is a TrainJob as Kuota's webhook leaves it: suspended, in
// queue lq, on the runtime, with numNodes nodes.
func newTrainJob(ns, name string, ref map[string]any, numNodes int64, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"suspend": true, "runtimeRef": ref,
		"trainer": map[string]any{"numNodes": numNodes},
	}}}
	u.SetGroupVersionKind(trainjob.GVK)
	u.SetNamespace(ns)
	u.SetName(name)
	all := map[string]string{jobframework.QueueNameLabel: "lq"}
	for k, v := range labels {
		all[k] = v
	}
	u.SetLabels(all)
	return u
}

func getTrainJob(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(trainjob.GVK)
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// workloadOf returns the TrainJob's Workload, or nil.
func workloadOf(t *testing.T, u *unstructured.Unstructured) *kueue.Workload {
	t.Helper()
	var wl kueue.Workload
	key := client.ObjectKey{Namespace: u.GetNamespace(), Name: jobframework.WorkloadName(u.GetName(), u.GetUID(), trainjob.GVK)}
	if err := env.Client.Get(context.Background(), key, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return &wl
}

// suspended reads spec.suspend.
func suspended(u *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
	return v
}

// kuotaPatch returns Kuota's runtime patch of the TrainJob, or nil.
func kuotaPatch(u *unstructured.Unstructured) map[string]any {
	patches, _, _ := unstructured.NestedSlice(u.Object, "spec", "runtimePatches")
	for _, p := range patches {
		if m, ok := p.(map[string]any); ok && m["manager"] == trainjob.PatchManager {
			return m
		}
	}
	return nil
}

// patchedNodeSelector is the node selector Kuota's patch gives the
// replicated job "node".
func patchedNodeSelector(u *unstructured.Unstructured) map[string]string {
	p := kuotaPatch(u)
	if p == nil {
		return nil
	}
	rjs, _, _ := unstructured.NestedSlice(p, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
	for _, rj := range rjs {
		m, _ := rj.(map[string]any)
		if m["name"] == "node" {
			ns, _, _ := unstructured.NestedStringMap(m, "template", "spec", "template", "spec", "nodeSelector")
			return ns
		}
	}
	return nil
}

// waitRunning waits until the TrainJob runs with its flavor's node label
// in Kuota's runtime patch.
func waitRunning(t *testing.T, ns, name, fl string) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	eventually(t, "TrainJob "+name+" started on flavor "+fl, func() error {
		u = getTrainJob(t, ns, name)
		if suspended(u) {
			return fmt.Errorf("still suspended")
		}
		if sel := patchedNodeSelector(u); sel["pool"] != fl {
			return fmt.Errorf("Kuota's patch gives node selector %v", sel)
		}
		return nil
	})
	return u
}

// setStatus writes TrainJob status as the trainer controller would.
func setStatus(t *testing.T, ns, name string, status map[string]any) {
	t.Helper()
	eventually(t, "TrainJob "+name+" status written", func() error {
		u := getTrainJob(t, ns, name)
		u.Object["status"] = status
		return env.Client.Status().Update(context.Background(), u)
	})
}

// condition is a TrainJob condition as the trainer writes it.
func condition(typ, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": "True", "reason": reason, "message": msg,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

// jobsStatus is the trainer's status of the "node" child Jobs.
func jobsStatus(active, ready, succeeded int64) map[string]any {
	return map[string]any{"jobsStatus": []any{map[string]any{"name": "node", "active": active, "ready": ready,
		"succeeded": succeeded, "failed": int64(0), "suspended": int64(0)}}}
}
