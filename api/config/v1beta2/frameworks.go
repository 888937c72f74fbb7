package v1beta2

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtInFramework describes one framework name accepted in
// integrations.frameworks.
type builtInFramework struct {
	// gvk is the kind the framework manages.
	gvk schema.GroupVersionKind
	// multiKueueKind is the kind of the framework's MultiKueue adapter, or
	// the zero value when the framework has none.
	multiKueueKind schema.GroupKind
}

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

var (
	podGVK = gvk("", "v1", "Pod")

	// builtInFrameworks lists the 18 built-in integrations by framework name.
	builtInFrameworks = map[string]builtInFramework{
		"batch/job":                                withAdapter(gvk("batch", "v1", "Job")),
		"jobset.x-k8s.io/jobset":                   withAdapter(gvk("jobset.x-k8s.io", "v1alpha2", "JobSet")),
		"kubeflow.org/mpijob":                      withAdapter(gvk("kubeflow.org", "v2beta1", "MPIJob")),
		"kubeflow.org/pytorchjob":                  withAdapter(gvk("kubeflow.org", "v1", "PyTorchJob")),
		"kubeflow.org/tfjob":                       withAdapter(gvk("kubeflow.org", "v1", "TFJob")),
		"kubeflow.org/xgboostjob":                  withAdapter(gvk("kubeflow.org", "v1", "XGBoostJob")),
		"kubeflow.org/paddlejob":                   withAdapter(gvk("kubeflow.org", "v1", "PaddleJob")),
		"kubeflow.org/jaxjob":                      withAdapter(gvk("kubeflow.org", "v1", "JAXJob")),
		"trainer.kubeflow.org/trainjob":            withAdapter(gvk("trainer.kubeflow.org", "v1alpha1", "TrainJob")),
		"ray.io/rayjob":                            withAdapter(gvk("ray.io", "v1", "RayJob")),
		"ray.io/raycluster":                        withAdapter(gvk("ray.io", "v1", "RayCluster")),
		"ray.io/rayservice":                        withAdapter(gvk("ray.io", "v1", "RayService")),
		"workload.codeflare.dev/appwrapper":        withAdapter(gvk("workload.codeflare.dev", "v1beta2", "AppWrapper")),
		"sparkoperator.k8s.io/sparkapplication":    {gvk: gvk("sparkoperator.k8s.io", "v1beta2", "SparkApplication")},
		"pod":                                      withAdapter(podGVK),
		"deployment":                               {gvk: gvk("apps", "v1", "Deployment"), multiKueueKind: podGVK.GroupKind()},
		"statefulset":                              withAdapter(gvk("apps", "v1", "StatefulSet")),
		"leaderworkerset.x-k8s.io/leaderworkerset": withAdapter(gvk("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")),
	}
)

func withAdapter(k schema.GroupVersionKind) builtInFramework {
	return builtInFramework{gvk: k, multiKueueKind: k.GroupKind()}
}

// PodFrameworkName is the framework name of the plain Pod integration.
const PodFrameworkName = "pod"

// BuiltInFrameworkNames returns the names accepted in
// integrations.frameworks, sorted.
func BuiltInFrameworkNames() []string {
	names := make([]string, 0, len(builtInFrameworks))
	for name := range builtInFrameworks {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// IsBuiltInFramework reports whether name is a built-in framework name.
func IsBuiltInFramework(name string) bool {
	_, ok := builtInFrameworks[name]
	return ok
}

// BuiltInFrameworkGVK returns the kind managed by a built-in framework.
func BuiltInFrameworkGVK(name string) (schema.GroupVersionKind, bool) {
	fw, ok := builtInFrameworks[name]
	return fw.gvk, ok
}

// ParseExternalFramework parses a "Kind.version.group" string. It fails when
// any of the three parts is empty.
func ParseExternalFramework(s string) (schema.GroupVersionKind, bool) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return schema.GroupVersionKind{}, false
	}
	return gvk(parts[2], parts[1], parts[0]), true
}
