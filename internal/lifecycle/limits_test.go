package lifecycle

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// withContainers replaces the workload's containers with ones of these
// requests and limits (pairs).
func withContainers(b *wlb, rr ...corev1.ResourceRequirements) *wlb {
	var cs []corev1.Container
	for i, r := range rr {
		cs = append(cs, corev1.Container{Name: string(rune('a' + i)), Resources: r})
	}
	b.wl.Spec.PodSets[0].Template.Spec.Containers = cs
	return b
}

func TestSummarizeLimitRangesKeepsTheTightestBounds(t *testing.T) {
	got := SummarizeLimitRanges([]corev1.LimitRangeSpec{
		{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer, Min: rl("cpu", "100m"), Max: rl("cpu", "4", "memory", "8Gi")},
			{Type: corev1.LimitTypePersistentVolumeClaim, Max: rl("storage", "1Gi")},
		}},
		{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer, Min: rl("cpu", "50m"), Max: rl("cpu", "2"), MaxLimitRequestRatio: rl("cpu", "3")},
			{Type: corev1.LimitTypePod, Max: rl("cpu", "6")},
		}},
	})
	if got == nil || got.Container == nil || got.Pod == nil {
		t.Fatalf("summary %+v, want container and pod bounds", got)
	}
	for _, c := range []struct {
		what      string
		list      corev1.ResourceList
		name, amt string
	}{
		{"container min cpu (largest)", got.Container.Min, "cpu", "100m"},
		{"container max cpu (smallest)", got.Container.Max, "cpu", "2"},
		{"container max memory", got.Container.Max, "memory", "8Gi"},
		{"container ratio", got.Container.MaxRatio, "cpu", "3"},
		{"pod max cpu", got.Pod.Max, "cpu", "6"},
	} {
		q, ok := c.list[corev1.ResourceName(c.name)]
		if !ok || q.Cmp(resource.MustParse(c.amt)) != 0 {
			t.Errorf("%s = %v, want %s", c.what, q.String(), c.amt)
		}
	}
	if SummarizeLimitRanges([]corev1.LimitRangeSpec{{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Default: rl("cpu", "1")},
		{Type: corev1.LimitTypePersistentVolumeClaim, Max: rl("storage", "1Gi")},
	}}}) != nil {
		t.Error("defaults and PVC bounds alone should bound nothing")
	}
}

func TestCheckResources(t *testing.T) {
	lr := SummarizeLimitRanges([]corev1.LimitRangeSpec{{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Min: rl("cpu", "100m"), Max: rl("cpu", "2"), MaxLimitRequestRatio: rl("memory", "2")},
		{Type: corev1.LimitTypePod, Max: rl("cpu", "3")},
	}}})
	cases := []struct {
		name       string
		containers []corev1.ResourceRequirements
		init       []corev1.ResourceRequirements
		lr         *LimitRanges
		want       []string // substrings; none means no problem
	}{
		{name: "within bounds", lr: lr, containers: []corev1.ResourceRequirements{
			{Requests: rl("cpu", "1", "memory", "1Gi"), Limits: rl("cpu", "2", "memory", "2Gi")}}},
		{name: "request above limit, without LimitRanges", containers: []corev1.ResourceRequirements{
			{Requests: rl("cpu", "700m"), Limits: rl("cpu", "500m")}},
			want: []string{MsgResourceValidation, "podSets[main].template.spec.containers[a]: cpu request 700m exceeds its limit 500m"}},
		{name: "container above max", lr: lr, containers: []corev1.ResourceRequirements{
			{Requests: rl("cpu", "3")}},
			want: []string{MsgLimitRange, "containers[a]: cpu request 3 is above the maximum 2"}},
		{name: "container below min", lr: lr, containers: []corev1.ResourceRequirements{
			{Requests: rl("cpu", "10m"), Limits: rl("cpu", "50m")}},
			want: []string{"cpu request 10m is below the minimum 100m", "cpu limit 50m is below the minimum 100m"}},
		{name: "limit too many times the request", lr: lr, containers: []corev1.ResourceRequirements{
			{Requests: rl("memory", "1Gi"), Limits: rl("memory", "3Gi")}},
			want: []string{"memory limit 3Gi is more than 2 times its request 1Gi"}},
		{name: "pod total above the pod max", lr: lr, containers: []corev1.ResourceRequirements{
			{Requests: rl("cpu", "2")}, {Requests: rl("cpu", "1500m")}},
			want: []string{"podSets[main] pod: cpu request 3500m is above the maximum 3"}},
		{name: "init container larger than the containers' sum", lr: lr, init: []corev1.ResourceRequirements{
			{Requests: rl("cpu", "1")}, {Requests: rl("cpu", "3500m")}},
			containers: []corev1.ResourceRequirements{{Requests: rl("cpu", "500m")}, {Requests: rl("cpu", "500m")}, {Requests: rl("cpu", "500m")}},
			want:       []string{"podSets[main] pod: cpu request 3500m is above the maximum 3"}},
		{name: "init container above the container max", lr: lr, init: []corev1.ResourceRequirements{{Requests: rl("cpu", "2500m")}},
			want: []string{"podSets[main].template.spec.initContainers[init-a]: cpu request 2500m is above the maximum 2"}},
		{name: "no LimitRanges: only requests against limits", containers: []corev1.ResourceRequirements{
			{Requests: rl("cpu", "30")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wl := withContainers(newWL(), c.containers...).wl
			for i, r := range c.init {
				wl.Spec.PodSets[0].Template.Spec.InitContainers = append(wl.Spec.PodSets[0].Template.Spec.InitContainers,
					corev1.Container{Name: "init-" + string(rune('a'+i)), Resources: r})
			}
			got := CheckResources(wl, c.lr)
			if len(c.want) == 0 {
				if got != "" {
					t.Fatalf("CheckResources = %q, want no problem", got)
				}
				if p := Place(wl, &View{LocalQueueKnown: true, ClusterQueue: cqView(kueue.None), LimitRanges: c.lr}); p != Queued {
					t.Errorf("placed %v, want Queued", p)
				}
				return
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("CheckResources = %q, want it to contain %q", got, w)
				}
			}
			v := &View{LocalQueueKnown: true, ClusterQueue: cqView(kueue.None), LimitRanges: c.lr}
			if p := Place(wl, v); p != Aside {
				t.Errorf("placed %v, want Aside", p)
			}
			s := Next(wl, v, &Options{}, t0)
			if s.Action != SetPending || s.Reason != kueue.WorkloadReasonPending || s.Message != got ||
				s.EventReason != kueue.WorkloadReasonPending {
				t.Fatalf("Next = %+v, want SetPending Pending with the message and a Pending event", s)
			}
			wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved,
				Status: metav1.ConditionFalse, Reason: kueue.WorkloadReasonPending, Message: got})
			if s := Next(wl, v, &Options{}, t0); s.Action != None {
				t.Errorf("Next on a workload that already says so = %+v, want nothing", s)
			}
		})
	}
}

// A reserved workload is left alone: its job owns what runs.
func TestCheckResourcesLeavesReservedWorkloads(t *testing.T) {
	wl := withContainers(newWL(), corev1.ResourceRequirements{Requests: rl("cpu", "2"), Limits: rl("cpu", "1")}).reserved("cq", true).wl
	v := &View{LocalQueueKnown: true, ClusterQueue: cqView(kueue.None), AdmittedIn: cqView(kueue.None)}
	if p := Place(wl, v); p != Holding {
		t.Errorf("placed %v, want Holding", p)
	}
}
