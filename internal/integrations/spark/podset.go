package spark

import (
	"maps"
	"strconv"
	"strings"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// role is the driver or the executors: where their fields are and the
// Spark properties that may set the same things from spec.sparkConf.
type role struct {
	path *field.Path
	// container is the name of the Spark container the operator asks
	// Spark to use in the pod template.
	container string
	podSpec   func(*sparkv1beta2.SparkApplication) *sparkv1beta2.SparkPodSpec
	// coreRequest and priorityClass are outside SparkPodSpec.
	coreRequest   func(*sparkv1beta2.SparkApplication) *string
	priorityClass func(*sparkv1beta2.SparkApplication) *string
	// Spark property names.
	coresKey, requestCoresKey, memoryKey, overheadKey, overheadFactorKey string
	executor                                                             bool
}

var specPath = field.NewPath("spec")

var driverRole = &role{
	path:              specPath.Child("driver"),
	container:         "spark-kubernetes-driver",
	podSpec:           func(a *sparkv1beta2.SparkApplication) *sparkv1beta2.SparkPodSpec { return &a.Spec.Driver.SparkPodSpec },
	coreRequest:       func(a *sparkv1beta2.SparkApplication) *string { return a.Spec.Driver.CoreRequest },
	priorityClass:     func(a *sparkv1beta2.SparkApplication) *string { return a.Spec.Driver.PriorityClassName },
	coresKey:          "spark.driver.cores",
	requestCoresKey:   "spark.kubernetes.driver.request.cores",
	memoryKey:         "spark.driver.memory",
	overheadKey:       "spark.driver.memoryOverhead",
	overheadFactorKey: "spark.driver.memoryOverheadFactor",
}

var executorRole = &role{
	path:      specPath.Child("executor"),
	container: "spark-kubernetes-executor",
	podSpec: func(a *sparkv1beta2.SparkApplication) *sparkv1beta2.SparkPodSpec {
		return &a.Spec.Executor.SparkPodSpec
	},
	coreRequest:       func(a *sparkv1beta2.SparkApplication) *string { return a.Spec.Executor.CoreRequest },
	priorityClass:     func(a *sparkv1beta2.SparkApplication) *string { return a.Spec.Executor.PriorityClassName },
	coresKey:          "spark.executor.cores",
	requestCoresKey:   "spark.kubernetes.executor.request.cores",
	memoryKey:         "spark.executor.memory",
	overheadKey:       "spark.executor.memoryOverhead",
	overheadFactorKey: "spark.executor.memoryOverheadFactor",
	executor:          true,
}

// Spark properties about the executors' count.
const (
	instancesKey         = "spark.executor.instances"
	dynamicAllocationKey = "spark.dynamicAllocation.enabled"
)

// localDirPrefix names the volumes Spark mounts as local directories
// itself; the operator does not add them to the pods.
const localDirPrefix = "spark-local-dir-"

var (
	instancesPath = executorRole.path.Child("instances")
	sparkConfPath = specPath.Child("sparkConf")
)

// executorCount is how many executors the application runs:
// spec.executor.instances, else spark.executor.instances of spec.sparkConf,
// else 1 (the Spark operator's default).
func executorCount(app *sparkv1beta2.SparkApplication) (int32, field.ErrorList) {
	if n := app.Spec.Executor.Instances; n != nil {
		if *n < 0 {
			return 0, field.ErrorList{field.Invalid(instancesPath, *n, "must not be negative")}
		}
		return *n, nil
	}
	if v, ok := app.Spec.SparkConf[instancesKey]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 {
			return 0, field.ErrorList{field.Invalid(sparkConfPath.Key(instancesKey), v, "must be a non-negative number of executors")}
		}
		return int32(n), nil
	}
	return 1, nil
}

// dynamicAllocation reports where the application turns Spark's dynamic
// allocation on (nil when it does not).
func dynamicAllocation(app *sparkv1beta2.SparkApplication) *field.Path {
	if d := app.Spec.DynamicAllocation; d != nil && d.Enabled {
		return specPath.Child("dynamicAllocation", "enabled")
	}
	if on, err := strconv.ParseBool(strings.TrimSpace(app.Spec.SparkConf[dynamicAllocationKey])); err == nil && on {
		return sparkConfPath.Key(dynamicAllocationKey)
	}
	return nil
}

// podTemplate is the pod the Spark operator and Spark make for the role:
// the role's template (or one with just the Spark container) with the
// role's typed fields applied and the requests Spark computes.
func podTemplate(app *sparkv1beta2.SparkApplication, r *role) (*corev1.PodTemplateSpec, field.ErrorList) {
	ps := r.podSpec(app)
	t := &corev1.PodTemplateSpec{}
	if ps.Template != nil {
		t.Labels = maps.Clone(ps.Template.Labels)
		t.Annotations = maps.Clone(ps.Template.Annotations)
		t.Spec = *ps.Template.Spec.DeepCopy()
	}
	c := mainContainer(&t.Spec, r.container)
	if img := ptr.Deref(ps.Image, ptr.Deref(app.Spec.Image, "")); img != "" {
		c.Image = img
	}
	addVolumes(&t.Spec, c, app.Spec.Volumes, ps.VolumeMounts)
	errs := setResources(app, r, c)
	t.Spec.InitContainers = appendMissing(t.Spec.InitContainers, ps.InitContainers)
	t.Spec.Containers = appendMissing(t.Spec.Containers, ps.Sidecars)
	if pc := ptr.Deref(r.priorityClass(app), ""); pc != "" {
		t.Spec.PriorityClassName, t.Spec.Priority = pc, nil
	}
	if ps.Affinity != nil {
		t.Spec.Affinity = ps.Affinity.DeepCopy()
	}
	t.Spec.NodeSelector = merged(t.Spec.NodeSelector, app.Spec.NodeSelector, ps.NodeSelector)
	t.Spec.Tolerations = append(t.Spec.Tolerations, ps.Tolerations...)
	t.Labels = merged(t.Labels, ps.Labels)
	t.Annotations = merged(t.Annotations, ps.Annotations)
	return t, errs
}

// mainContainer returns the Spark container of a pod spec: the one of the
// operator's container name, else the first, else a new one of that name.
// The pointer is valid until spec.Containers is appended to.
func mainContainer(spec *corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	if len(spec.Containers) == 0 {
		spec.Containers = []corev1.Container{{Name: name}}
	}
	return &spec.Containers[0]
}

// addVolumes adds the application's volumes the role mounts, and the
// mounts, as the operator does; Spark's local directories are its own.
func addVolumes(spec *corev1.PodSpec, c *corev1.Container, volumes []corev1.Volume, mounts []corev1.VolumeMount) {
	for _, m := range mounts {
		if strings.HasPrefix(m.Name, localDirPrefix) {
			continue
		}
		for _, v := range volumes {
			if v.Name != m.Name {
				continue
			}
			if !hasVolume(spec.Volumes, v.Name) {
				spec.Volumes = append(spec.Volumes, *v.DeepCopy())
			}
			c.VolumeMounts = append(c.VolumeMounts, m)
			break
		}
	}
}

func hasVolume(vs []corev1.Volume, name string) bool {
	for _, v := range vs {
		if v.Name == name {
			return true
		}
	}
	return false
}

// appendMissing appends the containers whose name and image are not there
// yet, as the operator does.
func appendMissing(list, add []corev1.Container) []corev1.Container {
	for _, c := range add {
		found := false
		for _, have := range list {
			if have.Name == c.Name && have.Image == c.Image {
				found = true
				break
			}
		}
		if !found {
			list = append(list, *c.DeepCopy())
		}
	}
	return list
}

// merged copies the maps, later ones winning; nil when all are empty.
func merged(ms ...map[string]string) map[string]string {
	var out map[string]string
	for _, m := range ms {
		if len(m) == 0 {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		maps.Copy(out, m)
	}
	return out
}

// setResources sets the Spark container's requests and limits: the CPU
// and memory Spark requests, the core and memory limits, and the GPU.
func setResources(app *sparkv1beta2.SparkApplication, r *role, c *corev1.Container) field.ErrorList {
	ps := r.podSpec(app)
	cpu, errs := cpuRequest(app, r)
	mem, memErrs := memoryRequest(app, r)
	errs = append(errs, memErrs...)
	if len(errs) > 0 {
		return errs
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	c.Resources.Requests[corev1.ResourceCPU] = cpu
	c.Resources.Requests[corev1.ResourceMemory] = mem
	if v := ps.CoreLimit; v != nil {
		q, err := resource.ParseQuantity(*v)
		if err != nil {
			return field.ErrorList{field.Invalid(r.path.Child("coreLimit"), *v, "must be a CPU quantity")}
		}
		setLimit(c, corev1.ResourceCPU, q)
	}
	if v := ps.MemoryLimit; v != nil {
		q, err := memoryLimit(*v)
		if err != nil {
			return field.ErrorList{field.Invalid(r.path.Child("memoryLimit"), *v, err.Error())}
		}
		setLimit(c, corev1.ResourceMemory, q)
	}
	if g := ps.GPU; g != nil && g.Name != "" && g.Quantity > 0 {
		q := *resource.NewQuantity(g.Quantity, resource.DecimalSI)
		setLimit(c, corev1.ResourceName(g.Name), q)
		c.Resources.Requests[corev1.ResourceName(g.Name)] = q
	}
	return nil
}

func setLimit(c *corev1.Container, name corev1.ResourceName, q resource.Quantity) {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Limits[name] = q
}
