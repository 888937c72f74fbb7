package pod

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// member is a pod of group g (total n) requesting cpu.
func member(name, g string, n int, cpu string, phase corev1.PodPhase) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
			Labels:      map[string]string{jobframework.QueueNameLabel: "lq", jobframework.PodGroupNameLabel: g, jobframework.ManagedLabel: "true"},
			Annotations: map[string]string{jobframework.PodGroupTotalCountAnnotation: fmt.Sprint(n)},
			Finalizers:  []string{jobframework.PodFinalizer}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	jobframework.Gate(&p)
	return p
}

func TestGroupPodSetsByRole(t *testing.T) {
	u := newUnit(true, "g", []corev1.Pod{member("a", "g", 3, "1", ""), member("b", "g", 3, "2", ""), member("c", "g", 3, "1", "")})
	sets, err := u.podSets()
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].Count+sets[1].Count != 3 || string(sets[0].Name) > string(sets[1].Name) {
		t.Fatalf("podSets %v, want two roles (1 cpu x2, 2 cpu x1), sorted by name", sets)
	}
	for _, s := range sets {
		if len(s.Name) != roleHashLength {
			t.Errorf("PodSet %q is not named by an %d-digit role hash", s.Name, roleHashLength)
		}
	}
}

func TestIncompleteGroupWaitsUnlessFast(t *testing.T) {
	u := newUnit(true, "g", []corev1.Pod{member("a", "g", 4, "1", "")})
	if _, err := u.podSets(); err != errTooFewPods {
		t.Fatalf("podSets of 1 pod of 4 = %v, want errTooFewPods", err)
	}
	p := member("a", "g", 4, "1", "")
	p.Annotations[jobframework.PodGroupFastAdmissionAnnotation] = "true"
	p.Annotations[jobframework.RoleHashAnnotation] = "main"
	sets, err := newUnit(true, "g", []corev1.Pod{p}).podSets()
	if err != nil || len(sets) != 1 || sets[0].Name != "main" || sets[0].Count != 4 {
		t.Fatalf("fast group podSets = %v, %v; want main x4", sets, err)
	}
}

func TestGroupWhosePodsDisagreeIsRefused(t *testing.T) {
	u := newUnit(true, "g", []corev1.Pod{member("a", "g", 2, "1", ""), member("b", "g", 3, "1", "")})
	if err := u.check(); err == nil || !strings.Contains(err.Error(), jobframework.PodGroupTotalCountAnnotation) {
		t.Errorf("check() = %v, want the total counts named", err)
	}
	b := member("b", "g", 2, "1", "")
	b.Labels[jobframework.QueueNameLabel] = "other"
	if err := newUnit(true, "g", []corev1.Pod{member("a", "g", 2, "1", ""), b}).check(); err == nil || !strings.Contains(err.Error(), "queues") {
		t.Errorf("check() = %v, want the queue names named", err)
	}
	// A failed pod does not count.
	failed := member("b", "g", 3, "1", corev1.PodFailed)
	if err := newUnit(true, "g", []corev1.Pod{member("a", "g", 2, "1", ""), failed}).check(); err != nil {
		t.Errorf("check() with a failed pod that disagrees = %v, want nil", err)
	}
}

func TestGroupFinishes(t *testing.T) {
	ok := newUnit(true, "g", []corev1.Pod{member("a", "g", 2, "1", corev1.PodSucceeded), member("b", "g", 2, "1", corev1.PodSucceeded)})
	if msg, success, done := ok.finished(); !done || !success || msg != "Pods succeeded: 2/2." {
		t.Errorf("finished() = %q %v %v, want done, success", msg, success, done)
	}
	failedOne := []corev1.Pod{member("a", "g", 2, "1", corev1.PodSucceeded), member("b", "g", 2, "1", corev1.PodFailed)}
	if _, _, done := newUnit(true, "g", failedOne).finished(); done {
		t.Error("a retriable group with a failed pod waits for its replacement")
	}
	failedOne[1].Annotations[jobframework.RetriableInGroupAnnotation] = "false"
	if _, success, done := newUnit(true, "g", failedOne).finished(); !done || success {
		t.Errorf("an unretriable group with no pod left running: done %v success %v, want done, failed", done, success)
	}
	serving := member("a", "g", 1, "1", corev1.PodSucceeded)
	serving.Annotations[jobframework.PodGroupServingAnnotation] = "true"
	if _, _, done := newUnit(true, "g", []corev1.Pod{serving}).finished(); done {
		t.Error("a serving group never finishes")
	}
}

func TestFailedPodIsReplacedAndExcessGoes(t *testing.T) {
	pods := []corev1.Pod{member("a", "g", 2, "1", corev1.PodRunning), member("b", "g", 2, "1", corev1.PodFailed), member("c", "g", 2, "1", "")}
	u := newUnit(true, "g", pods)
	if r := u.replaced(); len(r) != 1 || r[0].Name != "b" {
		t.Errorf("replaced() = %v, want the failed pod b", r)
	}
	if u.absent() != 0 {
		t.Errorf("absent() = %d, want 0", u.absent())
	}
	u = newUnit(true, "g", append(pods, member("d", "g", 2, "1", "")))
	if e := u.excess(); len(e) != 1 || e[0].Name != "d" {
		t.Errorf("excess() = %v, want the newest pod d", e)
	}
	if u := newUnit(true, "g", pods[:2]); u.absent() != 1 {
		t.Errorf("absent() = %d, want 1 pod to replace", u.absent())
	}
}

func TestReclaimableAndFit(t *testing.T) {
	wl := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: 3,
		Template: corev1.PodTemplateSpec{Spec: member("t", "g", 2, "1", "").Spec}}}}}
	var pods []corev1.Pod
	for i := range 2 {
		p := member(fmt.Sprint(i), "g", 2, "1", corev1.PodRunning)
		p.Annotations[jobframework.PodGroupServingAnnotation] = "true"
		p.Annotations[jobframework.PodGroupFastAdmissionAnnotation] = "true"
		p.Annotations[jobframework.RoleHashAnnotation] = "main"
		pods = append(pods, p)
	}
	u := newUnit(true, "g", pods)
	if r := u.reclaimable(wl); len(r) != 1 || r[0].Count != 1 {
		t.Fatalf("a serving group scaled from 3 to 2: reclaimable %v, want main: 1", r)
	}
	wl.Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: "main", Count: 2}}
	if u.fits(wl) {
		t.Error("a group of 2 does not fit a Workload of 3 that gave 2 back")
	}
	wl.Status.ReclaimablePods = nil
	if !u.fits(wl) {
		t.Error("a group of 2 fits a Workload of 3")
	}
	rolled := newUnit(true, "g", []corev1.Pod{*u.pods[0].DeepCopy(), member("b", "g", 2, "2", corev1.PodRunning)})
	rolled.pods[1].Annotations = u.pods[1].Annotations
	if rolled.fits(wl) {
		t.Error("a pod rolled to bigger requests under the same role does not fit the Workload")
	}
	for i := range u.pods {
		u.pods[i].Annotations[jobframework.PodGroupTotalCountAnnotation] = "4"
	}
	if u.fits(wl) {
		t.Error("a group grown to 4 does not fit a Workload of 3")
	}
}

func TestApplyAdmissionUngates(t *testing.T) {
	p := member("a", "g", 1, "1", "")
	info := &jobframework.PodSetInfo{Name: "main", NodeSelector: map[string]string{"pool": "x"},
		Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
		Labels:      map[string]string{jobframework.PodSetLabel: "main"}, Annotations: map[string]string{jobframework.WorkloadAnnotation: "wl"}}
	if err := applyAdmission(&p, info); err != nil {
		t.Fatal(err)
	}
	if jobframework.IsGated(&p) || p.Spec.NodeSelector["pool"] != "x" || len(p.Spec.Tolerations) != 1 ||
		p.Annotations[jobframework.WorkloadAnnotation] != "wl" || p.Labels[jobframework.QueueNameLabel] != "lq" {
		t.Errorf("pod after admission: %+v", p)
	}
}

func TestRoleHashIgnoresWhatDoesNotMatter(t *testing.T) {
	a, b := member("a", "g", 1, "1", ""), member("b", "g", 1, "1", "")
	b.Spec.Containers[0].Image = "other"
	b.Spec.Containers[0].Name = "other"
	ha, _ := roleHash(&a.Spec)
	hb, _ := roleHash(&b.Spec)
	if ha != hb {
		t.Error("pods that differ only in image and name share a role")
	}
	b.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	if hb, _ = roleHash(&b.Spec); ha == hb {
		t.Error("pods of different requests have different roles")
	}
}
