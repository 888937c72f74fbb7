package mkdispatch

import (
	"fmt"
	"maps"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/integrations/statefulset"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A StatefulSet queued in the manager runs in a worker as its pod group:
// its pods (made here as its controller would, then gated and grouped by
// the manager's real webhooks) are copied to the worker that reserves
// quota and started there, while the manager's pods stay gated and mirror
// the copies' run.
func TestStatefulSetRunsInAWorker(t *testing.T) {
	ns := setup(t)
	startWithPodsAnd(t, "statefulset")
	sel := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "db", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}},
	}
	create(t, manager, sts)
	var pods []*corev1.Pod
	for i := range 2 {
		labels := maps.Clone(sts.Spec.Template.Labels)
		labels[appsv1.PodIndexLabel] = strconv.Itoa(i)
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("db-%d", i), Labels: labels,
				Annotations: maps.Clone(sts.Spec.Template.Annotations),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *sts.Spec.Template.Spec.DeepCopy(),
		}
		create(t, manager, p)
		pods = append(pods, p)
	}
	wlKey := client.ObjectKey{Namespace: ns, Name: statefulset.GroupName("db")}
	startsInWorker1(t, ns, wlKey, pods)
}
