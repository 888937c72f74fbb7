package spark

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The Spark operator passes the typed fields to spark-submit as Spark
// properties, after those of spec.sparkConf, so a typed field wins over
// the same property in spec.sparkConf. Spark then sizes each pod:
//
//   - CPU: the request-cores property if set, else the cores (default 1);
//   - memory: the memory (default 1g) plus its overhead, which is either
//     set or max(factor x memory, 384 MiB), the factor defaulting to 0.1
//     (0.4 for Python and R applications); executors add
//     spark.executor.pyspark.memory (Python) and the off-heap size (when
//     spark.memory.offHeap.enabled).
//
// Kuota computes the same requests before the pods exist.

const (
	mib                    = int64(1) << 20
	defaultMemoryMiB       = 1024
	minOverheadMiB         = 384
	jvmOverheadFactor      = 0.1
	nonJVMOverheadFactor   = 0.4
	globalOverheadFactor   = "spark.kubernetes.memoryOverheadFactor"
	pysparkMemoryKey       = "spark.executor.pyspark.memory"
	offHeapEnabledKey      = "spark.memory.offHeap.enabled"
	offHeapSizeKey         = "spark.memory.offHeap.size"
	maxMiB                 = math.MaxInt64 / mib
	memoryStringHint       = "must be a Spark memory amount: a whole number with an optional unit b, k, m, g, t or p (for instance 512m or 2g)"
	overheadFactorHint     = "must be a non-negative number"
	coresHint              = "must be a positive whole number of cores"
	cpuQuantityHint        = "must be a positive CPU quantity (for instance 1 or 500m)"
	memoryLimitQuantityErr = "must be a memory amount (for instance 2g or 2Gi)"
)

var memoryString = regexp.MustCompile(`^([0-9]+)([a-z]*)$`)

var memoryUnits = map[string]int64{
	"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "p": 1 << 50, "pb": 1 << 50,
}

// parseBytes reads a Spark memory string; a bare number is in unit bytes.
func parseBytes(s string, unit int64) (int64, error) {
	m := memoryString.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return 0, fmt.Errorf("%s", memoryStringHint)
	}
	if m[2] != "" {
		u, ok := memoryUnits[m[2]]
		if !ok {
			return 0, fmt.Errorf("unknown unit %q: %s", m[2], memoryStringHint)
		}
		unit = u
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("too large")
	}
	return n * unit, nil
}

// setting is a value and the field it came from.
type setting struct {
	value string
	path  *field.Path
}

// typedOrConf is the typed field when set, else the property of
// spec.sparkConf; ok is false when neither is.
func typedOrConf(app *sparkv1beta2.SparkApplication, typed *string, typedPath *field.Path, key string) (setting, bool) {
	if typed != nil {
		return setting{*typed, typedPath}, true
	}
	if v, ok := app.Spec.SparkConf[key]; ok {
		return setting{v, sparkConfPath.Key(key)}, true
	}
	return setting{}, false
}

// cpuRequest is the CPU Spark requests for the role's pods.
func cpuRequest(app *sparkv1beta2.SparkApplication, r *role) (resource.Quantity, field.ErrorList) {
	if s, ok := typedOrConf(app, r.coreRequest(app), r.path.Child("coreRequest"), r.requestCoresKey); ok {
		q, err := resource.ParseQuantity(strings.TrimSpace(s.value))
		if err != nil || q.Sign() <= 0 {
			return resource.Quantity{}, field.ErrorList{field.Invalid(s.path, s.value, cpuQuantityHint)}
		}
		return q, nil
	}
	cores := int64(1)
	if c := r.podSpec(app).Cores; c != nil {
		if *c < 1 {
			return resource.Quantity{}, field.ErrorList{field.Invalid(r.path.Child("cores"), *c, coresHint)}
		}
		cores = int64(*c)
	} else if v, ok := app.Spec.SparkConf[r.coresKey]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 1 {
			return resource.Quantity{}, field.ErrorList{field.Invalid(sparkConfPath.Key(r.coresKey), v, coresHint)}
		}
		cores = n
	}
	return *resource.NewQuantity(cores, resource.DecimalSI), nil
}

// memoryRequest is the memory Spark requests for the role's pods.
func memoryRequest(app *sparkv1beta2.SparkApplication, r *role) (resource.Quantity, field.ErrorList) {
	ps := r.podSpec(app)
	memMiB := int64(defaultMemoryMiB)
	if s, ok := typedOrConf(app, ps.Memory, r.path.Child("memory"), r.memoryKey); ok {
		b, err := parseBytes(s.value, mib)
		if err != nil {
			return resource.Quantity{}, field.ErrorList{field.Invalid(s.path, s.value, err.Error())}
		}
		memMiB = b / mib
	}
	overhead, errs := overheadMiB(app, r, memMiB)
	if len(errs) > 0 {
		return resource.Quantity{}, errs
	}
	total := memMiB + overhead
	if r.executor {
		extra, errs := executorExtraMiB(app)
		if len(errs) > 0 {
			return resource.Quantity{}, errs
		}
		total += extra
	}
	if total > maxMiB {
		return resource.Quantity{}, field.ErrorList{field.Invalid(r.path.Child("memory"), ptrString(ps.Memory), "memory and its overhead are too large")}
	}
	return *resource.NewQuantity(total*mib, resource.BinarySI), nil
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// overheadMiB is the memory overhead Spark adds to the role's memory.
func overheadMiB(app *sparkv1beta2.SparkApplication, r *role, memMiB int64) (int64, field.ErrorList) {
	if s, ok := typedOrConf(app, r.podSpec(app).MemoryOverhead, r.path.Child("memoryOverhead"), r.overheadKey); ok {
		b, err := parseBytes(s.value, mib)
		if err != nil {
			return 0, field.ErrorList{field.Invalid(s.path, s.value, err.Error())}
		}
		return b / mib, nil
	}
	factor := jvmOverheadFactor
	if app.Spec.Type == sparkv1beta2.SparkApplicationTypePython || app.Spec.Type == sparkv1beta2.SparkApplicationTypeR {
		factor = nonJVMOverheadFactor
	}
	var s setting
	var ok bool
	if s, ok = typedOrConf(app, nil, nil, r.overheadFactorKey); !ok {
		s, ok = typedOrConf(app, nil, nil, globalOverheadFactor)
	}
	if !ok && app.Spec.MemoryOverheadFactor != nil && *app.Spec.MemoryOverheadFactor != "" {
		s, ok = setting{*app.Spec.MemoryOverheadFactor, specPath.Child("memoryOverheadFactor")}, true
	}
	if ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(s.value), 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, field.ErrorList{field.Invalid(s.path, s.value, overheadFactorHint)}
		}
		factor = f
	}
	over := factor * float64(memMiB)
	if over > float64(maxMiB) {
		return 0, field.ErrorList{field.Invalid(s.path, s.value, "makes the memory overhead too large")}
	}
	return max(int64(over), minOverheadMiB), nil
}

// executorExtraMiB is the executors' Python and off-heap memory.
func executorExtraMiB(app *sparkv1beta2.SparkApplication) (int64, field.ErrorList) {
	conf := app.Spec.SparkConf
	var extra int64
	if v, ok := conf[pysparkMemoryKey]; ok && app.Spec.Type == sparkv1beta2.SparkApplicationTypePython {
		b, err := parseBytes(v, mib)
		if err != nil {
			return 0, field.ErrorList{field.Invalid(sparkConfPath.Key(pysparkMemoryKey), v, err.Error())}
		}
		extra += b / mib
	}
	if on, _ := strconv.ParseBool(strings.TrimSpace(conf[offHeapEnabledKey])); on {
		if v, ok := conf[offHeapSizeKey]; ok {
			b, err := parseBytes(v, 1)
			if err != nil {
				return 0, field.ErrorList{field.Invalid(sparkConfPath.Key(offHeapSizeKey), v, err.Error())}
			}
			extra += b / mib
		}
	}
	return extra, nil
}

// memoryLimit reads spec.<role>.memoryLimit as the operator does: a Spark
// memory string (a bare number is bytes) or a Kubernetes quantity.
func memoryLimit(v string) (resource.Quantity, error) {
	if b, err := parseBytes(v, 1); err == nil {
		return *resource.NewQuantity(b, resource.BinarySI), nil
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil || q.Sign() < 0 {
		return resource.Quantity{}, fmt.Errorf("%s", memoryLimitQuantityErr)
	}
	return q, nil
}
