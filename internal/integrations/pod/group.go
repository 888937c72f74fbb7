package pod

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// maxRoles is the most PodSets a group's Workload may have.
const maxRoles = 8

// unit is what one pass of the reconciler looks at: one plain pod, or the
// managed pods of one group. Everything here is pure.
type unit struct {
	group bool
	// name is the pod's name, or the group's.
	name string
	// pods are the members, oldest first.
	pods []corev1.Pod
}

func newUnit(group bool, name string, pods []corev1.Pod) *unit {
	slices.SortFunc(pods, func(a, b corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return &unit{group: group, name: name, pods: pods}
}

// ref is the pod whose labels speak for the unit (queue name, priority,
// total count): the oldest one that did not fail.
func (u *unit) ref() *corev1.Pod {
	for i := range u.pods {
		if u.pods[i].Status.Phase != corev1.PodFailed {
			return &u.pods[i]
		}
	}
	return &u.pods[0]
}

func (u *unit) annotation(key string) string { return u.ref().Annotations[key] }

// serving groups never finish (StatefulSets, LeaderWorkerSets).
func (u *unit) serving() bool {
	return u.group && u.annotation(jobframework.PodGroupServingAnnotation) == "true"
}

// fast groups get their Workload from their first pod, sized by the total
// count.
func (u *unit) fast() bool {
	_, ok := u.ref().Annotations[jobframework.PodGroupFastAdmissionAnnotation]
	return u.group && ok
}

// prebuilt is the name of the Workload another controller makes for the
// unit ("" when Kuota makes it).
func (u *unit) prebuilt() string { return u.ref().Labels[jobframework.PrebuiltWorkloadLabel] }

// totalCount reads a pod's group total count.
func totalCount(p *corev1.Pod) (int32, error) {
	v, ok := p.Annotations[jobframework.PodGroupTotalCountAnnotation]
	if !ok {
		return 0, fmt.Errorf("annotation %s is missing", jobframework.PodGroupTotalCountAnnotation)
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("annotation %s: %q is not a positive integer", jobframework.PodGroupTotalCountAnnotation, v)
	}
	return int32(n), nil
}

// total is the number of pods the unit runs.
func (u *unit) total() (int32, error) {
	if !u.group {
		return 1, nil
	}
	return totalCount(u.ref())
}

// runnable pods can still run, run, or succeeded: not Failed, and not
// deleted before they were scheduled.
func runnable(p *corev1.Pod) bool {
	if !p.DeletionTimestamp.IsZero() && p.Spec.NodeName == "" {
		return false
	}
	return p.Status.Phase != corev1.PodFailed
}

// running pods hold resources on a node: scheduled and not finished
// (being deleted included: their containers stop through a grace period).
func running(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && !jobframework.IsTerminal(p)
}

func deleting(p *corev1.Pod) bool { return !p.DeletionTimestamp.IsZero() }

// anyRunning reports whether a pod of the unit still holds resources.
func (u *unit) anyRunning() bool {
	return slices.ContainsFunc(u.pods, func(p corev1.Pod) bool { return running(&p) })
}

// allDeleting reports a unit whose every pod is being deleted.
func (u *unit) allDeleting() bool {
	return !slices.ContainsFunc(u.pods, func(p corev1.Pod) bool { return !deleting(&p) })
}

// check verifies that a group's pods agree: a valid total count, and the
// same queue name and total count on every pod that did not fail.
func (u *unit) check() error {
	if !u.group {
		return nil
	}
	ref := u.ref()
	total, err := totalCount(ref)
	if err != nil {
		return fmt.Errorf("pod %s: %w", ref.Name, err)
	}
	queue := jobframework.QueueName(ref)
	for i := range u.pods {
		p := &u.pods[i]
		if p.Status.Phase == corev1.PodFailed || deleting(p) {
			continue
		}
		if q := jobframework.QueueName(p); q != queue {
			return fmt.Errorf("pods %s and %s of group %s name different queues: %q and %q", ref.Name, p.Name, u.name, queue, q)
		}
		if n, err := totalCount(p); err != nil || n != total {
			return fmt.Errorf("pods %s and %s of group %s disagree on %s: %q and %q", ref.Name, p.Name, u.name,
				jobframework.PodGroupTotalCountAnnotation, ref.Annotations[jobframework.PodGroupTotalCountAnnotation],
				p.Annotations[jobframework.PodGroupTotalCountAnnotation])
		}
	}
	return nil
}

// active returns the runnable pods, in the order they are kept: those
// with the finalizer, then those already ungated, then the oldest.
func (u *unit) active() []*corev1.Pod {
	var out []*corev1.Pod
	for i := range u.pods {
		if runnable(&u.pods[i]) {
			out = append(out, &u.pods[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *corev1.Pod) int {
		if fa, fb := hasPodFinalizer(a), hasPodFinalizer(b); fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		if ga, gb := jobframework.IsGated(a), jobframework.IsGated(b); ga != gb {
			if gb {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}

// errTooFewPods says that a group is not complete yet.
var errTooFewPods = errors.New("fewer runnable pods than the group's total count")

// podSets describes the unit as Workload PodSets: one PodSet "main" of one
// pod for a plain pod; for a group, a PodSet per role of its kept pods
// (sorted by name), or, with fast admission, the first pod's role counted
// total times.
func (u *unit) podSets() ([]kueue.PodSet, error) {
	if !u.group {
		return []kueue.PodSet{{Name: kueue.DefaultPodSetName, Count: 1, Template: podSetTemplate(&u.pods[0])}}, nil
	}
	total, err := u.total()
	if err != nil {
		return nil, err
	}
	active := u.active()
	if len(active) == 0 {
		return nil, errTooFewPods
	}
	if u.fast() {
		role, err := roleOf(active[0])
		if err != nil {
			return nil, err
		}
		return []kueue.PodSet{{Name: kueue.PodSetReference(role), Count: total, Template: podSetTemplate(active[0])}}, nil
	}
	if int32(len(active)) < total {
		return nil, errTooFewPods
	}
	var sets []kueue.PodSet
	for _, p := range active[:total] {
		role, err := roleOf(p)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(sets, func(s kueue.PodSet) bool { return string(s.Name) == role }); i >= 0 {
			sets[i].Count++
			continue
		}
		sets = append(sets, kueue.PodSet{Name: kueue.PodSetReference(role), Count: 1, Template: podSetTemplate(p)})
	}
	if len(sets) > maxRoles {
		return nil, fmt.Errorf("group %s has %d roles (pods of different shapes); a group has at most %d", u.name, len(sets), maxRoles)
	}
	slices.SortFunc(sets, func(a, b kueue.PodSet) int { return cmp.Compare(a.Name, b.Name) })
	return sets, nil
}

// podSetTemplate is the pod template of a PodSet, from one of its pods:
// the pod's spec and, of its annotations, those that ask for a
// topology-aware placement and the one naming its pods' index label.
func podSetTemplate(p *corev1.Pod) corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{Spec: *p.Spec.DeepCopy()}
	t.Annotations = jobframework.TopologyAnnotations(p.Annotations)
	if v, ok := p.Annotations[jobframework.PodGroupPodIndexLabelAnnotation]; ok && t.Annotations != nil {
		t.Annotations[jobframework.PodGroupPodIndexLabelAnnotation] = v
	}
	return t
}

// podIndex gives the index label of a PodSet's pods: the one their
// pod-group-pod-index-label annotation names.
func podIndex(ps *kueue.PodSet) jobframework.PodIndex {
	return jobframework.PodIndex{Label: ps.Template.Annotations[jobframework.PodGroupPodIndexLabelAnnotation]}
}

// excess are the runnable pods beyond the total count, newest and gated
// first: they cannot be admitted with the group.
func (u *unit) excess() []*corev1.Pod {
	if !u.group {
		return nil
	}
	total, err := u.total()
	if err != nil {
		return nil
	}
	active := u.active()
	if int32(len(active)) <= total {
		return nil
	}
	return active[total:]
}

// replaced are the failed pods still holding the finalizer once the group
// has its total count of runnable pods again: they are no longer needed.
func (u *unit) replaced() []*corev1.Pod {
	if !u.group {
		return nil
	}
	total, err := u.total()
	if err != nil || int32(len(u.active())) < total {
		return nil
	}
	var out []*corev1.Pod
	for i := range u.pods {
		p := &u.pods[i]
		if p.Status.Phase == corev1.PodFailed && hasPodFinalizer(p) {
			out = append(out, p)
		}
	}
	return out
}

// absent is how many pods the group misses to reach its total count.
func (u *unit) absent() int32 {
	total, err := u.total()
	if err != nil {
		return 0
	}
	return max(0, total-int32(len(u.active())))
}

// unretriable reports a group one of whose pods says retriable-in-group:
// "false".
func (u *unit) unretriable() bool {
	return slices.ContainsFunc(u.pods, func(p corev1.Pod) bool {
		return p.Annotations[jobframework.RetriableInGroupAnnotation] == "false"
	})
}

// finished says whether the unit is over: a plain pod that Succeeded or
// Failed; a group whose total count of pods succeeded, or an unretriable
// group none of whose pods is left running. Serving groups never finish.
func (u *unit) finished() (msg string, success, done bool) {
	if !u.group {
		p := &u.pods[0]
		if !jobframework.IsTerminal(p) {
			return "", false, false
		}
		msg = p.Status.Message
		if msg == "" {
			msg = "Pod " + string(p.Status.Phase)
		}
		return msg, p.Status.Phase == corev1.PodSucceeded, true
	}
	if u.serving() {
		return "", false, false
	}
	total, err := u.total()
	if err != nil {
		return "", false, false
	}
	var succeeded int32
	activeLeft := false
	for i := range u.pods {
		p := &u.pods[i]
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded++
		}
		if !jobframework.IsTerminal(p) {
			activeLeft = true
		}
	}
	if succeeded >= total || (u.unretriable() && !activeLeft) {
		return fmt.Sprintf("Pods succeeded: %d/%d.", succeeded, total), succeeded >= total, true
	}
	return "", false, false
}

// ready reports whether every PodSet of the Workload has its count of pods
// ready or succeeded.
func (u *unit) ready(wl *kueue.Workload) bool {
	counts := map[string]int32{}
	for i := range u.pods {
		p := &u.pods[i]
		if p.Status.Phase != corev1.PodSucceeded && !podReady(p) {
			continue
		}
		role := string(kueue.DefaultPodSetName)
		if u.group {
			r, err := roleOf(p)
			if err != nil {
				continue
			}
			role = r
		}
		counts[role]++
	}
	for _, ps := range wl.Spec.PodSets {
		if counts[string(ps.Name)] < ps.Count {
			return false
		}
	}
	return true
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// fits reports whether the Workload still describes the unit: every role
// of its kept pods is a PodSet, with room for the pods it needs (the total
// count for a fast group). What a serving group's reclaimable pods gave
// back (it shrank) is no longer room; a batch group's are its succeeded
// pods, which it still counts.
func (u *unit) fits(wl *kueue.Workload) bool {
	if !u.group {
		return true
	}
	want, err := u.podSets()
	if err != nil {
		return true // an incomplete group is judged once complete
	}
	room := map[kueue.PodSetReference]int32{}
	for _, ps := range wl.Spec.PodSets {
		room[ps.Name] = ps.Count
	}
	// A pod whose requests differ from its PodSet's (a StatefulSet rolled
	// to a bigger template under the same role) would run on quota it was
	// not admitted with.
	for _, p := range u.active() {
		role, err := roleOf(p)
		if err != nil {
			continue
		}
		i := slices.IndexFunc(wl.Spec.PodSets, func(ps kueue.PodSet) bool { return string(ps.Name) == role })
		if i >= 0 && !sameRequests(&p.Spec, &wl.Spec.PodSets[i].Template.Spec) {
			return false
		}
	}
	if u.serving() {
		for _, rp := range wl.Status.ReclaimablePods {
			room[rp.Name] -= rp.Count
		}
	}
	for _, ps := range want {
		have, ok := room[ps.Name]
		if !ok || have < ps.Count {
			return false
		}
	}
	return true
}

// reclaimable is what the Workload can give back: for a batch group, the
// pods that succeeded, per role; for a serving group of one role that
// shrank (a StatefulSet scaled down), the pods above its total count.
// Counts never go down while the Workload holds its reservation.
func (u *unit) reclaimable(wl *kueue.Workload) []kueue.ReclaimablePod {
	if !u.group {
		return wl.Status.ReclaimablePods
	}
	want := map[kueue.PodSetReference]int32{}
	switch {
	case !u.serving():
		for i := range u.pods {
			if u.pods[i].Status.Phase != corev1.PodSucceeded {
				continue
			}
			if role, err := roleOf(&u.pods[i]); err == nil {
				want[kueue.PodSetReference(role)]++
			}
		}
	case len(wl.Spec.PodSets) == 1:
		if total, err := u.total(); err == nil && total < wl.Spec.PodSets[0].Count {
			want[wl.Spec.PodSets[0].Name] = wl.Spec.PodSets[0].Count - total
		}
	}
	for _, rp := range wl.Status.ReclaimablePods {
		want[rp.Name] = max(want[rp.Name], rp.Count)
	}
	var out []kueue.ReclaimablePod
	for _, ps := range wl.Spec.PodSets {
		if n := min(want[ps.Name], ps.Count); n > 0 {
			out = append(out, kueue.ReclaimablePod{Name: ps.Name, Count: n})
		}
	}
	return out
}

func hasPodFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, jobframework.PodFinalizer)
}

// infoFor finds the admission info of a pod's PodSet.
func (u *unit) infoFor(p *corev1.Pod, infos []jobframework.PodSetInfo) (*jobframework.PodSetInfo, error) {
	name := string(kueue.DefaultPodSetName)
	if u.group {
		role, err := roleOf(p)
		if err != nil {
			return nil, err
		}
		name = role
	}
	for i := range infos {
		if string(infos[i].Name) == name {
			return &infos[i], nil
		}
	}
	if len(infos) == 1 && !u.group {
		return &infos[0], nil
	}
	return nil, fmt.Errorf("pod %s: the admission has no PodSet %q", p.Name, name)
}

// applyAdmission injects an admission into a gated pod (node selector,
// tolerations, labels, annotations) and lifts the admission gate. A pod's
// gates can only be removed once it exists: it keeps those it was created
// with, and loses the topology gate too unless the admission placed its
// PodSet on a topology (the topology ungater lifts it then).
func applyAdmission(p *corev1.Pod, info *jobframework.PodSetInfo) error {
	gates := slices.Clone(p.Spec.SchedulingGates)
	t := corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	if err := jobframework.ApplyToTemplate(&t, *info); err != nil {
		return err
	}
	p.Labels, p.Annotations, p.Spec = t.Labels, t.Annotations, t.Spec
	p.Spec.SchedulingGates = gates
	jobframework.Ungate(p)
	if !slices.ContainsFunc(info.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == jobframework.TopologyGate }) {
		jobframework.RemoveGate(p, jobframework.TopologyGate)
	}
	return nil
}

// sameRequests compares the containers' requests of two pod specs.
func sameRequests(a, b *corev1.PodSpec) bool {
	reqs := func(s *corev1.PodSpec) []corev1.ResourceList {
		var out []corev1.ResourceList
		for _, c := range append(slices.Clone(s.InitContainers), s.Containers...) {
			out = append(out, c.Resources.Requests)
		}
		return out
	}
	return equality.Semantic.DeepEqual(reqs(a), reqs(b))
}
