package trainjob

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Kuota does not compile the trainer's Go types (their package does not
// build against the k8s.io/api Kuota uses), so TrainJobs and training
// runtimes are unstructured objects. Every field Kuota reads or writes is
// named here, once; schema_test.go checks each path against the trainer
// v2.3.0 CRDs.

// Field paths of a TrainJob.
var (
	suspendPath          = []string{"spec", "suspend"}
	managedByPath        = []string{"spec", "managedBy"}
	statusPath           = []string{"status"}
	runtimeRefNamePath   = []string{"spec", "runtimeRef", "name"}
	runtimeRefKindPath   = []string{"spec", "runtimeRef", "kind"}
	runtimeRefGroupPath  = []string{"spec", "runtimeRef", "apiGroup"}
	numNodesPath         = []string{"spec", "trainer", "numNodes"}
	resourcesPerNodePath = []string{"spec", "trainer", "resourcesPerNode"}
	runtimePatchesPath   = []string{"spec", "runtimePatches"}
	conditionsPath       = []string{"status", "conditions"}
	jobsStatusPath       = []string{"status", "jobsStatus"}
)

// Field paths inside one entry of spec.runtimePatches, and inside one of
// its replicated job patches.
var (
	patchManagerPath        = []string{"manager"}
	patchReplicatedJobsPath = []string{"trainingRuntimeSpec", "template", "spec", "replicatedJobs"}
	patchJobSpecPath        = []string{"trainingRuntimeSpec", "template", "spec"}
	rjPatchNamePath         = []string{"name"}
	rjPatchPodMetaPath      = []string{"template", "spec", "template", "metadata"}
	rjPatchNodeSelectorPath = []string{"template", "spec", "template", "spec", "nodeSelector"}
	rjPatchTolerationsPath  = []string{"template", "spec", "template", "spec", "tolerations"}
	rjPatchGatesPath        = []string{"template", "spec", "template", "spec", "schedulingGates"}
)

// Field paths inside one entry of status.conditions.
var (
	conditionTypePath    = []string{"type"}
	conditionStatusPath  = []string{"status"}
	conditionMessagePath = []string{"message"}
)

// Field paths inside one entry of status.jobsStatus.
var (
	jobStatusNamePath      = []string{"name"}
	jobStatusReadyPath     = []string{"ready"}
	jobStatusSucceededPath = []string{"succeeded"}
	jobStatusActivePath    = []string{"active"}
)

// Field paths of a TrainingRuntime or ClusterTrainingRuntime.
var (
	runtimeJobSetSpecPath        = []string{"spec", "template", "spec"}
	runtimeNumNodesPath          = []string{"spec", "mlPolicy", "numNodes"}
	runtimeMLPolicyPath          = []string{"spec", "mlPolicy"}
	runtimeMPIPath               = []string{"spec", "mlPolicy", "mpi"}
	runtimeRunLauncherAsNodePath = []string{"spec", "mlPolicy", "mpi", "runLauncherAsNode"}
)

// dotted writes a path as users read it: "spec.trainer.numNodes".
func dotted(path []string) string { return strings.Join(path, ".") }

// nested returns the value at path (nil when absent, or when a parent is
// not an object).
func nested(obj map[string]any, path []string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// boolAt reads a boolean; absent is false, another type an error.
func boolAt(obj map[string]any, path []string) (bool, error) {
	switch v := nested(obj, path).(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("%s: must be a boolean, not %T", dotted(path), v)
	}
}

// stringAt reads a string; absent is "", another type an error.
func stringAt(obj map[string]any, path []string) (string, error) {
	switch v := nested(obj, path).(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s: must be a string, not %T", dotted(path), v)
	}
}

// int32At reads a whole number that fits an int32; ok is false when it is
// absent. Decoders give int64, float64 or json.Number.
func int32At(obj map[string]any, path []string) (n int32, ok bool, err error) {
	v := nested(obj, path)
	if v == nil {
		return 0, false, nil
	}
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case int:
		f = float64(x)
	case float64:
		f = x
	case json.Number:
		if f, err = x.Float64(); err != nil {
			return 0, false, fmt.Errorf("%s: must be an integer: %w", dotted(path), err)
		}
	default:
		return 0, false, fmt.Errorf("%s: must be an integer, not %T", dotted(path), v)
	}
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, false, fmt.Errorf("%s: %v is not a 32-bit integer", dotted(path), v)
	}
	return int32(f), true, nil
}

// listAt reads a list of objects; absent is empty, another type an error.
func listAt(obj map[string]any, path []string) ([]map[string]any, error) {
	v := nested(obj, path)
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be a list, not %T", dotted(path), v)
	}
	out := make([]map[string]any, 0, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: must be an object, not %T", dotted(path), i, it)
		}
		out = append(out, m)
	}
	return out, nil
}

// decodeAt converts the object at path into a typed value (left zero when
// absent).
func decodeAt(obj map[string]any, path []string, into any) error {
	v := nested(obj, path)
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: must be an object, not %T", dotted(path), v)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, into); err != nil {
		return fmt.Errorf("%s: %w", dotted(path), err)
	}
	return nil
}

// setAt writes a value into the object, creating the parent objects.
func setAt(u *unstructured.Unstructured, value any, path []string) {
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	setNested(u.Object, value, path)
}

// tolerationsValue converts tolerations into JSON-like values.
func tolerationsValue(list []corev1.Toleration) ([]any, error) {
	out := make([]any, 0, len(list))
	for i := range list {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&list[i])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// stringMapValue converts a label map into a JSON-like one.
func stringMapValue(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
