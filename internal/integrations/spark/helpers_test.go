package spark

import (
	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// newApp is a queued, suspended Scala SparkApplication: a driver of 2
// cores and 2g, and 3 executors of 500m and 1g plus 512m of overhead.
func newApp() *sparkv1beta2.SparkApplication {
	return &sparkv1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: sparkv1beta2.SparkApplicationSpec{
			Suspend: ptr.To(true), Type: sparkv1beta2.SparkApplicationTypeScala, Mode: sparkv1beta2.DeployModeCluster,
			SparkVersion: "4.0.0", Image: ptr.To("spark:4.0.0"),
			MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: ptr.To("local:///opt/spark/examples/jars/spark-examples.jar"),
			Driver: sparkv1beta2.DriverSpec{
				SparkPodSpec: sparkv1beta2.SparkPodSpec{
					Cores: ptr.To[int32](2), Memory: ptr.To("2g"),
					Labels:         map[string]string{"team": "a"},
					ServiceAccount: ptr.To("spark"),
				},
				PriorityClassName: ptr.To("high"),
			},
			Executor: sparkv1beta2.ExecutorSpec{
				SparkPodSpec: sparkv1beta2.SparkPodSpec{
					Memory: ptr.To("1g"), MemoryOverhead: ptr.To("512m"),
					NodeSelector: map[string]string{"disk": "ssd"},
					Tolerations:  []corev1.Toleration{{Key: "batch", Operator: corev1.TolerationOpExists}},
				},
				Instances:   ptr.To[int32](3),
				CoreRequest: ptr.To("500m"),
			},
		},
	}
}

// admission is an admission to the flavor "pool=spot" with its toleration.
func admission(podSets []kueue.PodSet) []jobframework.PodSetInfo {
	var out []jobframework.PodSetInfo
	for _, ps := range podSets {
		out = append(out, jobframework.PodSetInfo{Name: ps.Name, Count: ps.Count,
			NodeSelector: map[string]string{"pool": "spot"},
			Tolerations:  []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Labels:       map[string]string{jobframework.PodSetLabel: string(ps.Name)},
			Annotations:  map[string]string{jobframework.WorkloadAnnotation: "wl"}})
	}
	return out
}

// restoreInfos is what the reconciler restores from the Workload.
func restoreInfos(podSets []kueue.PodSet) []jobframework.PodSetInfo {
	return jobframework.RestoreInfos(&kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: podSets}})
}
