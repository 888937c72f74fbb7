// Package ray queues KubeRay's kinds (ray.io/v1, from
// github.com/ray-project/kuberay/ray-operator): RayJob, RayCluster and
// RayService. All three carry a Ray cluster spec, so they share the code
// that turns a cluster into PodSets: "head" (one pod), then one PodSet per
// worker group, named after its lower-cased groupName, of replicas x
// numOfHosts pods. A RayJob that submits its job from a Kubernetes Job
// (submissionMode K8sJobMode, the default) adds the PodSet "submitter" of
// one pod. An admission goes into the head's, each worker group's and the
// submitter's pod template; a RayJob and a RayCluster are held by
// spec.suspend, a RayService by spec.rayClusterConfig.suspend.
package ray

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// PodSet names besides the worker groups'.
const (
	HeadPodSet      kueue.PodSetReference = "head"
	SubmitterPodSet kueue.PodSetReference = "submitter"
)

// maxPodSets is how many PodSets a Workload may have.
const maxPodSets = 8

// podTemplate is one PodSet of a Ray object and where its template is.
type podTemplate struct {
	name     kueue.PodSetReference
	count    int32
	template *corev1.PodTemplateSpec
}

// workerPodSet is the PodSet name of a worker group.
func workerPodSet(w *rayv1.WorkerGroupSpec) kueue.PodSetReference {
	return kueue.PodSetReference(strings.ToLower(w.GroupName))
}

// workerCount is a worker group's pod count: replicas (the CRD's default
// is 0) times numOfHosts (default 1).
func workerCount(w *rayv1.WorkerGroupSpec) int32 {
	return ptr.Deref(w.Replicas, 0) * max(w.NumOfHosts, 1)
}

// clusterTemplates lists the head and the worker groups of a cluster spec,
// in PodSet order.
func clusterTemplates(spec *rayv1.RayClusterSpec) []podTemplate {
	out := []podTemplate{{name: HeadPodSet, count: 1, template: &spec.HeadGroupSpec.Template}}
	for i := range spec.WorkerGroupSpecs {
		w := &spec.WorkerGroupSpecs[i]
		out = append(out, podTemplate{name: workerPodSet(w), count: workerCount(w), template: &w.Template})
	}
	return out
}

// autoscalerContainer is the in-tree autoscaler KubeRay adds to the head
// pod of an autoscaling cluster, with its default resources (KubeRay's) or
// those of spec.autoscalerOptions.resources: the head PodSet counts it.
func autoscalerContainer(spec *rayv1.RayClusterSpec) *corev1.Container {
	if !ptr.Deref(spec.EnableInTreeAutoscaling, false) {
		return nil
	}
	c := &corev1.Container{Name: "autoscaler", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	}}
	if o := spec.AutoscalerOptions; o != nil && o.Resources != nil {
		c.Resources = *o.Resources.DeepCopy()
	}
	return c
}

// clusterPodSets turns a cluster spec's templates into PodSets, the head
// counting the autoscaler when the cluster autoscales.
func clusterPodSets(spec *rayv1.RayClusterSpec, templates []podTemplate) ([]kueue.PodSet, error) {
	out, err := toPodSets(templates)
	if err != nil {
		return nil, err
	}
	if c := autoscalerContainer(spec); c != nil && len(out) > 0 && out[0].Name == HeadPodSet {
		out[0].Template.Spec.Containers = append(out[0].Template.Spec.Containers, *c)
	}
	return out, nil
}

// toPodSets copies templates into PodSets, refusing names that clash.
func toPodSets(templates []podTemplate) ([]kueue.PodSet, error) {
	if len(templates) > maxPodSets {
		return nil, fmt.Errorf("spec: %d PodSets (head, worker groups, submitter), at most %d are allowed", len(templates), maxPodSets)
	}
	seen := map[kueue.PodSetReference]bool{}
	out := make([]kueue.PodSet, 0, len(templates))
	for _, t := range templates {
		if seen[t.name] {
			return nil, fmt.Errorf("PodSet %q appears twice: worker group names must differ from each other and from %q and %q", t.name, HeadPodSet, SubmitterPodSet)
		}
		seen[t.name] = true
		out = append(out, kueue.PodSet{Name: t.name, Count: t.count, Template: *t.template.DeepCopy()})
	}
	return out, nil
}

// match finds, for each info, the template of the PodSet it names. Every
// PodSet must have its info and every info its PodSet.
func match(templates []podTemplate, infos []jobframework.PodSetInfo) ([]*corev1.PodTemplateSpec, error) {
	if len(infos) != len(templates) {
		return nil, fmt.Errorf("the object has %d PodSets, the admission has %d", len(templates), len(infos))
	}
	out := make([]*corev1.PodTemplateSpec, len(infos))
	for i, info := range infos {
		for _, t := range templates {
			if t.name == info.Name {
				out[i] = t.template
			}
		}
		if out[i] == nil {
			return nil, fmt.Errorf("the admission's PodSet %q is no PodSet of the object", info.Name)
		}
	}
	return out, nil
}

// applyAdmission puts an admission into the templates.
func applyAdmission(templates []podTemplate, infos []jobframework.PodSetInfo) error {
	ts, err := match(templates, infos)
	if err != nil {
		return err
	}
	for i, info := range infos {
		if err := jobframework.ApplyToTemplate(ts[i], info); err != nil {
			return err
		}
	}
	return nil
}

// restore puts the templates back as the Workload recorded them.
func restore(templates []podTemplate, infos []jobframework.PodSetInfo) bool {
	ts, err := match(templates, infos)
	if err != nil {
		return false
	}
	changed := false
	for i, info := range infos {
		if jobframework.RestoreTemplate(ts[i], info) {
			changed = true
		}
	}
	return changed
}

// validateCluster checks what the PodSets of a cluster spec need: worker
// group names that make distinct PodSet names, counts that are not
// negative, no more PodSets than a Workload holds (extra are the PodSets
// besides the cluster's), and no in-tree autoscaling unless elastic: the
// quota is reserved for the declared size, which the autoscaler would
// change without it.
func validateCluster(spec *rayv1.RayClusterSpec, path *field.Path, extra int, elastic bool) field.ErrorList {
	var errs field.ErrorList
	if ptr.Deref(spec.EnableInTreeAutoscaling, false) && !elastic {
		errs = append(errs, field.Invalid(path.Child("enableInTreeAutoscaling"), true,
			"a cluster queued by Kuota autoscales only as an elastic RayCluster (annotation "+kueue.ElasticJobAnnotation+`: "true"`+
				"): otherwise its quota is reserved for the declared size"))
	}
	groups := path.Child("workerGroupSpecs")
	if n := 1 + len(spec.WorkerGroupSpecs) + extra; n > maxPodSets {
		errs = append(errs, field.TooMany(groups, len(spec.WorkerGroupSpecs), maxPodSets-1-extra))
	}
	seen := map[kueue.PodSetReference]bool{HeadPodSet: true, SubmitterPodSet: true}
	for i := range spec.WorkerGroupSpecs {
		w := &spec.WorkerGroupSpecs[i]
		p := groups.Index(i)
		name := workerPodSet(w)
		switch msgs := validation.IsDNS1123Label(string(name)); {
		case w.GroupName == "":
			errs = append(errs, field.Required(p.Child("groupName"), "names the worker group's PodSet"))
		case len(msgs) > 0:
			errs = append(errs, field.Invalid(p.Child("groupName"), w.GroupName, "lower-cased, must be a DNS label: "+strings.Join(msgs, "; ")))
		case seen[name]:
			errs = append(errs, field.Duplicate(p.Child("groupName"), w.GroupName))
		}
		seen[name] = true
		if r := ptr.Deref(w.Replicas, 0); r < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), r, "must not be negative"))
		}
		if w.NumOfHosts < 0 {
			errs = append(errs, field.Invalid(p.Child("numOfHosts"), w.NumOfHosts, "must not be negative"))
		}
	}
	return errs
}
