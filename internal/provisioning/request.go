package provisioning

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Plan is what one attempt of a check asks cluster-autoscaler for (the
// controller adds the managed label): the ProvisioningRequest's metadata,
// class and parameters, and its pod sets,
// each a PodTemplate to create, a count, and the workload's PodSets it
// stands for (several when the config merges equal ones).
type Plan struct {
	Meta       metav1.ObjectMeta
	ClassName  string
	Parameters map[string]string
	Templates  []*corev1.PodTemplate
	Counts     []int32
	PodSets    [][]kueue.PodSetReference
}

// Needed returns the workload's PodSets that go into the request: those
// that ask for one of the config's managed resources, or all when it
// names none.
func Needed(wl *kueue.Workload, cfg *kueue.ProvisioningRequestConfigSpec) []*kueue.PodSet {
	var out []*kueue.PodSet
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		if len(cfg.ManagedResources) == 0 || slices.ContainsFunc(cfg.ManagedResources, func(r corev1.ResourceName) bool { return asksFor(ps, r) }) {
			out = append(out, ps)
		}
	}
	return out
}

// asksFor reports whether a PodSet's containers request (or limit) the
// resource.
func asksFor(ps *kueue.PodSet, r corev1.ResourceName) bool {
	spec := &ps.Template.Spec
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for _, c := range cs {
			if _, ok := c.Resources.Requests[r]; ok {
				return true
			}
			if _, ok := c.Resources.Limits[r]; ok {
				return true
			}
		}
	}
	if spec.Resources != nil {
		_, req := spec.Resources.Requests[r]
		_, lim := spec.Resources.Limits[r]
		return req || lim
	}
	return false
}

// Build makes the request of the given attempt of a check for a workload
// with a quota reservation. Each pod template is the PodSet's, with the
// node labels and tolerations of the flavors it was assigned (flavors by
// name; a missing one adds nothing), so that the autoscaler provisions
// nodes the pods will be allowed on; its count is the admitted one.
// Parameters are the config's, overridden by the workload's annotations
// with ParameterAnnotationPrefix.
func Build(wl *kueue.Workload, check string, attempt int32, cfg *kueue.ProvisioningRequestConfigSpec,
	flavors map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor) *Plan {
	name := RequestName(wl.Name, check, attempt)
	owner := []metav1.OwnerReference{{APIVersion: kueue.GroupVersion.String(), Kind: "Workload", Name: wl.Name, UID: wl.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	plan := &Plan{
		Meta:       metav1.ObjectMeta{Name: name, Namespace: wl.Namespace, OwnerReferences: owner},
		ClassName:  cfg.ProvisioningClassName,
		Parameters: parameters(wl, cfg),
	}
	for _, g := range group(wl, Needed(wl, cfg), cfg.PodSetMergePolicy, flavors) {
		tmpl := &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: TemplateName(name, string(g.names[0])), Namespace: wl.Namespace,
				OwnerReferences: owner},
			Template: g.template,
		}
		plan.Templates = append(plan.Templates, tmpl)
		plan.Counts = append(plan.Counts, g.count)
		plan.PodSets = append(plan.PodSets, g.names)
	}
	return plan
}

// parameters merges the config's parameters with the workload's
// annotations that carry ParameterAnnotationPrefix.
func parameters(wl *kueue.Workload, cfg *kueue.ProvisioningRequestConfigSpec) map[string]string {
	out := map[string]string{}
	for k, v := range cfg.Parameters {
		out[k] = string(v)
	}
	for k, v := range wl.Annotations {
		if p, ok := strings.CutPrefix(k, ParameterAnnotationPrefix); ok && p != "" {
			out[p] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// podSetGroup is one pod set of a request.
type podSetGroup struct {
	names    []kueue.PodSetReference
	template corev1.PodTemplateSpec
	count    int32
}

// group turns PodSets into request pod sets, merging those the policy
// calls equal (nil: none).
func group(wl *kueue.Workload, podSets []*kueue.PodSet, policy *kueue.ProvisioningRequestConfigPodSetMergePolicy,
	flavors map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor) []podSetGroup {
	var out []podSetGroup
	for _, ps := range podSets {
		tmpl := templateFor(wl, ps, flavors)
		count := admittedCount(wl, ps)
		i := -1
		if policy != nil {
			i = slices.IndexFunc(out, func(g podSetGroup) bool { return mergeable(*policy, &g.template, &tmpl) })
		}
		if i >= 0 {
			out[i].names = append(out[i].names, ps.Name)
			out[i].count += count
			continue
		}
		out = append(out, podSetGroup{names: []kueue.PodSetReference{ps.Name}, template: tmpl, count: count})
	}
	return out
}

// templateFor is the PodSet's template with its flavors' node labels and
// tolerations.
func templateFor(wl *kueue.Workload, ps *kueue.PodSet, flavors map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor) corev1.PodTemplateSpec {
	tmpl := *ps.Template.DeepCopy()
	psa := assignment(wl, ps.Name)
	if psa == nil {
		return tmpl
	}
	names := slices.Sorted(maps.Values(psa.Flavors))
	for _, name := range slices.Compact(names) {
		rf := flavors[name]
		if rf == nil {
			continue
		}
		if len(rf.Spec.NodeLabels) > 0 {
			if tmpl.Spec.NodeSelector == nil {
				tmpl.Spec.NodeSelector = map[string]string{}
			}
			maps.Copy(tmpl.Spec.NodeSelector, rf.Spec.NodeLabels)
		}
		for _, t := range rf.Spec.Tolerations {
			if !slices.ContainsFunc(tmpl.Spec.Tolerations, func(o corev1.Toleration) bool { return o.MatchToleration(&t) }) {
				tmpl.Spec.Tolerations = append(tmpl.Spec.Tolerations, t)
			}
		}
	}
	return tmpl
}

func assignment(wl *kueue.Workload, name kueue.PodSetReference) *kueue.PodSetAssignment {
	if wl.Status.Admission == nil {
		return nil
	}
	for i := range wl.Status.Admission.PodSetAssignments {
		if psa := &wl.Status.Admission.PodSetAssignments[i]; psa.Name == name {
			return psa
		}
	}
	return nil
}

// admittedCount is the PodSet's admitted count (its full count when the
// admission does not say).
func admittedCount(wl *kueue.Workload, ps *kueue.PodSet) int32 {
	if psa := assignment(wl, ps.Name); psa != nil && psa.Count != nil {
		return *psa.Count
	}
	return ps.Count
}

// mergeable reports whether two templates are one request pod set under
// the policy: identical templates, or identical scheduling requirements
// (requests of every container, pod resources, node selector,
// tolerations, affinity and resource claims).
func mergeable(policy kueue.ProvisioningRequestConfigPodSetMergePolicy, a, b *corev1.PodTemplateSpec) bool {
	if policy == kueue.IdenticalPodTemplates {
		return equality.Semantic.DeepEqual(a, b)
	}
	requests := func(cs []corev1.Container) []corev1.ResourceList {
		out := make([]corev1.ResourceList, len(cs))
		for i, c := range cs {
			out[i] = c.Resources.Requests
		}
		return out
	}
	x, y := &a.Spec, &b.Spec
	return equality.Semantic.DeepEqual(requests(x.Containers), requests(y.Containers)) &&
		equality.Semantic.DeepEqual(requests(x.InitContainers), requests(y.InitContainers)) &&
		equality.Semantic.DeepEqual(x.Resources, y.Resources) &&
		equality.Semantic.DeepEqual(x.NodeSelector, y.NodeSelector) &&
		equality.Semantic.DeepEqual(x.Tolerations, y.Tolerations) &&
		equality.Semantic.DeepEqual(x.Affinity, y.Affinity) &&
		equality.Semantic.DeepEqual(x.ResourceClaims, y.ResourceClaims)
}
