package mkdispatch

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	"github.com/kuota-dev/kuota/internal/integrations/leaderworkerset"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A LeaderWorkerSet queued in the manager runs in a worker group by group:
// a group's pods (made here as the LeaderWorkerSet controller would, then
// completed by the manager's real webhooks) are copied to the worker that
// reserves quota for the group's Workload and started there, while the
// manager's pods stay gated and mirror the copies' run.
func TestLeaderWorkerSetGroupRunsInAWorker(t *testing.T) {
	ns := setup(t)
	startWithPodsAnd(t, leaderworkerset.FrameworkName)
	tmpl := func() corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "serve",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	}
	leader := tmpl()
	lws := &lwsv1.LeaderWorkerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "infer", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: lwsv1.LeaderWorkerSetSpec{Replicas: ptr.To[int32](1), LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{
			Size: ptr.To[int32](2), LeaderTemplate: &leader, WorkerTemplate: tmpl(),
			RestartPolicy: lwsv1.RecreateGroupOnPodRestart},
			RolloutStrategy: lwsv1.RolloutStrategy{Type: lwsv1.RollingUpdateStrategyType},
			StartupPolicy:   lwsv1.LeaderCreatedStartupPolicy},
	}
	create(t, manager, lws)
	wlKey := client.ObjectKey{Namespace: ns, Name: leaderworkerset.WorkloadName(lws, 0)}
	var pods []*corev1.Pod
	for worker := range 2 {
		name := fmt.Sprintf("infer-0-%d", worker)
		if worker == 0 {
			name = "infer-0"
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels: map[string]string{lwsv1.SetNameLabelKey: lws.Name, lwsv1.WorkerIndexLabelKey: fmt.Sprint(worker)},
				Annotations: map[string]string{jobframework.SuspendingParentAnnotation: leaderworkerset.FrameworkName,
					jobframework.PodGroupServingAnnotation: "true", lwsv1.SizeAnnotationKey: "2"}},
			Spec: tmpl().Spec,
		}
		if worker > 0 {
			p.Labels[lwsv1.GroupIndexLabelKey] = "0"
			p.Annotations[lwsv1.LeaderPodNameAnnotationKey] = "infer-0"
		}
		create(t, manager, p)
		pods = append(pods, p)
	}
	startsInWorker1(t, ns, wlKey, pods)
}
