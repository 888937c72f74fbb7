package lifecycle

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Messages of a pending workload whose pods the API server would refuse,
// as Kueue words them before the details.
const (
	MsgResourceValidation = "resource validation failed: "
	MsgLimitRange         = "didn't satisfy LimitRange constraints: "
)

// LimitRanges is what a namespace's LimitRanges bound, merged as the
// LimitRanger admission plugin applies them all: the largest min, the
// smallest max and the smallest limit/request ratio of each resource, for
// each container (Container items) and for each pod (Pod items).
// PersistentVolumeClaim items concern no quota and are left out.
type LimitRanges struct {
	Container, Pod *Bounds
}

// Bounds are the merged min, max and maxLimitRequestRatio of one type.
type Bounds struct {
	Min, Max, MaxRatio corev1.ResourceList
}

// SummarizeLimitRanges merges LimitRange specs; nil when none bounds a
// container or a pod.
func SummarizeLimitRanges(specs []corev1.LimitRangeSpec) *LimitRanges {
	out := &LimitRanges{}
	for _, spec := range specs {
		for _, item := range spec.Limits {
			var b **Bounds
			switch item.Type {
			case corev1.LimitTypeContainer:
				b = &out.Container
			case corev1.LimitTypePod:
				b = &out.Pod
			default:
				continue
			}
			if len(item.Min)+len(item.Max)+len(item.MaxLimitRequestRatio) == 0 {
				continue
			}
			if *b == nil {
				*b = &Bounds{}
			}
			(*b).Min = merge((*b).Min, item.Min, 1)
			(*b).Max = merge((*b).Max, item.Max, -1)
			(*b).MaxRatio = merge((*b).MaxRatio, item.MaxLimitRequestRatio, -1)
		}
	}
	if out.Container == nil && out.Pod == nil {
		return nil
	}
	return out
}

// merge adds from's amounts to into, keeping the larger (keep 1) or the
// smaller (keep -1) where both name a resource.
func merge(into, from corev1.ResourceList, keep int) corev1.ResourceList {
	for name, q := range from {
		if into == nil {
			into = corev1.ResourceList{}
		}
		if old, ok := into[name]; !ok || q.Cmp(old) == keep {
			into[name] = q
		}
	}
	return into
}

// CheckResources reports why the pods of a pending workload would be
// refused by the API server, "" when they would not: a container whose
// request exceeds its limit, or, with lr, containers or pods outside the
// namespace's LimitRange bounds. The workload stays pending with that
// message instead of being admitted to pods that cannot be created. It
// runs each time the informer shows a pending workload: in a namespace
// without LimitRanges it allocates only once it has found something
// wrong.
func CheckResources(wl *kueue.Workload, lr *LimitRanges) string {
	var problems []string
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		eachContainer(&ps.Template.Spec, func(field string, c *corev1.Container) {
			if !overLimit(c) {
				return
			}
			for _, name := range slices.Sorted(maps.Keys(c.Resources.Requests)) {
				req := c.Resources.Requests[name]
				if lim, ok := c.Resources.Limits[name]; ok && req.Cmp(lim) > 0 {
					problems = append(problems, fmt.Sprintf("%s: %s request %s exceeds its limit %s",
						containerPath(ps.Name, field, c.Name), name, req.String(), lim.String()))
				}
			}
		})
	}
	if len(problems) > 0 {
		return MsgResourceValidation + strings.Join(problems, "; ")
	}
	if lr == nil {
		return ""
	}
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		spec := &ps.Template.Spec
		if lr.Container != nil {
			eachContainer(spec, func(field string, c *corev1.Container) {
				problems = append(problems, lr.Container.check(containerPath(ps.Name, field, c.Name),
					c.Resources.Requests, c.Resources.Limits)...)
			})
		}
		if lr.Pod != nil {
			requests, limits := podTotals(spec)
			problems = append(problems, lr.Pod.check(fmt.Sprintf("podSets[%s] pod", ps.Name), requests, limits)...)
		}
	}
	if len(problems) > 0 {
		return MsgLimitRange + strings.Join(problems, "; ")
	}
	return ""
}

// overLimit reports a request above its limit.
func overLimit(c *corev1.Container) bool {
	for name, req := range c.Resources.Requests {
		if lim, ok := c.Resources.Limits[name]; ok && req.Cmp(lim) > 0 {
			return true
		}
	}
	return false
}

func eachContainer(spec *corev1.PodSpec, f func(field string, c *corev1.Container)) {
	for i := range spec.InitContainers {
		f("initContainers", &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f("containers", &spec.Containers[i])
	}
}

func containerPath(podSet kueue.PodSetReference, field, name string) string {
	return fmt.Sprintf("podSets[%s].template.spec.%s[%s]", podSet, field, name)
}

// check lists the amounts of one container or pod outside the bounds.
// Only what is set is checked: the LimitRange defaults were added when
// the workload was built.
func (b *Bounds) check(path string, requests, limits corev1.ResourceList) []string {
	var out []string
	for _, amounts := range []struct {
		kind string
		list corev1.ResourceList
	}{{"request", requests}, {"limit", limits}} {
		for _, name := range slices.Sorted(maps.Keys(b.Min)) {
			q, ok := amounts.list[name]
			if min := b.Min[name]; ok && q.Cmp(min) < 0 {
				out = append(out, fmt.Sprintf("%s: %s %s %s is below the minimum %s", path, name, amounts.kind, q.String(), min.String()))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(b.Max)) {
			q, ok := amounts.list[name]
			if max := b.Max[name]; ok && q.Cmp(max) > 0 {
				out = append(out, fmt.Sprintf("%s: %s %s %s is above the maximum %s", path, name, amounts.kind, q.String(), max.String()))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.MaxRatio)) {
		ratio := b.MaxRatio[name]
		req, hasReq := requests[name]
		lim, hasLim := limits[name]
		if !hasReq || !hasLim || req.IsZero() {
			continue
		}
		if float64(lim.MilliValue())/float64(req.MilliValue()) > ratio.AsApproximateFloat64() {
			out = append(out, fmt.Sprintf("%s: %s limit %s is more than %s times its request %s", path, name, lim.String(),
				ratio.String(), req.String()))
		}
	}
	return out
}

// podTotals adds up a pod's container requests and limits as the
// LimitRanger plugin does for Pod items: the containers' sum, or the
// largest init container where that is more. Amounts that cannot be
// counted are at resources.Max, above any bound (CheckPodSets refuses
// such a workload before this runs).
func podTotals(spec *corev1.PodSpec) (requests, limits corev1.ResourceList) {
	req, lim := resources.Requests{}, resources.Requests{}
	amounts := func(list corev1.ResourceList) resources.Requests {
		r, _ := resources.FromResourceList(list)
		return r
	}
	for i := range spec.Containers {
		req.Add(amounts(spec.Containers[i].Resources.Requests))
		lim.Add(amounts(spec.Containers[i].Resources.Limits))
	}
	for i := range spec.InitContainers {
		req.Max(amounts(spec.InitContainers[i].Resources.Requests))
		lim.Max(amounts(spec.InitContainers[i].Resources.Limits))
	}
	return req.ToResourceList(), lim.ToResourceList()
}
