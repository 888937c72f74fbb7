package spark

import (
	"strings"
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	"k8s.io/utils/ptr"
)

// The requests are those Spark gives the pods, so that the quota counts
// what the pods will ask the scheduler for.
func TestRequestsAreThoseSparkComputes(t *testing.T) {
	bare := func() *sparkv1beta2.SparkApplication {
		return &sparkv1beta2.SparkApplication{Spec: sparkv1beta2.SparkApplicationSpec{Type: sparkv1beta2.SparkApplicationTypeScala}}
	}
	for name, tc := range map[string]struct {
		app      func() *sparkv1beta2.SparkApplication
		role     *role
		cpu, mem string
		errField string
	}{
		"defaults: 1 core, 1g plus the 384Mi minimum": {app: bare, role: driverRole, cpu: "1", mem: "1408Mi"},
		"coreRequest wins over cores": {role: executorRole, cpu: "250m", mem: "1408Mi", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.Executor.Cores, a.Spec.Executor.CoreRequest = ptr.To[int32](4), ptr.To("250m")
			return a
		}},
		"cores from spec.sparkConf": {role: driverRole, cpu: "3", mem: "1408Mi", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.SparkConf = map[string]string{"spark.driver.cores": "3"}
			return a
		}},
		"10% overhead above the minimum": {role: executorRole, cpu: "1", mem: "9011Mi", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.Executor.Memory = ptr.To("8g")
			return a
		}},
		"Python defaults to 40%": {role: driverRole, cpu: "1", mem: "2867Mi", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.Type, a.Spec.Driver.Memory = sparkv1beta2.SparkApplicationTypePython, ptr.To("2g")
			return a
		}},
		"spark.kubernetes.memoryOverheadFactor wins over spec.memoryOverheadFactor": {role: driverRole, cpu: "1", mem: "2560Mi", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.Driver.Memory, a.Spec.MemoryOverheadFactor = ptr.To("2g"), ptr.To("0.5")
			a.Spec.SparkConf = map[string]string{"spark.kubernetes.memoryOverheadFactor": "0.25"}
			return a
		}},
		"executors add pyspark and off-heap memory": {role: executorRole, cpu: "1", mem: "3891Mi", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.Type, a.Spec.Executor.Memory = sparkv1beta2.SparkApplicationTypePython, ptr.To("2g")
			a.Spec.SparkConf = map[string]string{"spark.executor.pyspark.memory": "512m", "spark.memory.offHeap.enabled": "true", "spark.memory.offHeap.size": "536870912"}
			return a
		}},
		"a Kubernetes quantity is not a Spark memory string": {role: driverRole, errField: "spec.driver.memory", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.Driver.Memory = ptr.To("2Gi")
			return a
		}},
		"a bad overhead factor": {role: executorRole, errField: "spec.memoryOverheadFactor", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.MemoryOverheadFactor = ptr.To("lots")
			return a
		}},
		"a bad coreRequest": {role: executorRole, errField: "spec.executor.coreRequest", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.Executor.CoreRequest = ptr.To("-1")
			return a
		}},
		"memory that overflows": {role: driverRole, errField: "spec.driver.memory", app: func() *sparkv1beta2.SparkApplication {
			a := bare()
			a.Spec.Driver.Memory = ptr.To("8589934592p")
			return a
		}},
	} {
		t.Run(name, func(t *testing.T) {
			tmpl, errs := podTemplate(tc.app(), tc.role)
			if tc.errField != "" {
				if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.errField) {
					t.Fatalf("error %v, want one naming %s", errs, tc.errField)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			q := tmpl.Spec.Containers[0].Resources.Requests
			if q.Cpu().String() != tc.cpu || q.Memory().String() != tc.mem {
				t.Errorf("requests cpu %s memory %s, want %s and %s", q.Cpu(), q.Memory(), tc.cpu, tc.mem)
			}
		})
	}
}
