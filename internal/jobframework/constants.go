package jobframework

import "github.com/kuota-dev/kuota/internal/workload"

// Labels and annotations users set on jobs, and Kuota sets on jobs, pod
// templates and Workloads (the same keys as Kueue's).
const (
	// QueueNameLabel selects the job's LocalQueue.
	QueueNameLabel = "kueue.x-k8s.io/queue-name"
	// PriorityClassLabel names the job's WorkloadPriorityClass.
	PriorityClassLabel = "kueue.x-k8s.io/priority-class"
	// PrebuiltWorkloadLabel names an existing Workload to use for the job.
	PrebuiltWorkloadLabel = "kueue.x-k8s.io/prebuilt-workload-name"
	// MaxExecTimeSecondsLabel becomes the Workload's
	// spec.maximumExecutionTimeSeconds.
	MaxExecTimeSecondsLabel = "kueue.x-k8s.io/max-exec-time-seconds"

	// JobUIDLabel, on a Workload, is the UID of its job.
	JobUIDLabel = workload.JobUIDLabel
	// JobOwnerGVKAnnotation and JobOwnerNameAnnotation, on a Workload,
	// name its job and survive the owner reference's garbage collection.
	JobOwnerGVKAnnotation  = workload.JobOwnerGVKAnnotation
	JobOwnerNameAnnotation = workload.JobOwnerNameAnnotation

	// PodSetLabel, on an admitted job's pod template, names its PodSet.
	PodSetLabel = "kueue.x-k8s.io/podset"
	// WorkloadAnnotation, on an admitted job's pod template, names the
	// Workload.
	WorkloadAnnotation = "kueue.x-k8s.io/workload"
	// ClusterQueueLabel and LocalQueueLabel, on an admitted job's pods,
	// name the queues that admitted it.
	ClusterQueueLabel = "kueue.x-k8s.io/cluster-queue-name"
	LocalQueueLabel   = "kueue.x-k8s.io/local-queue-name"

	// PodJobUIDLabel, on an admitted job's pod templates, is the UID of
	// the job. It is Kuota's own (Kueue has none): the pods a job's
	// operator creates through child objects (a RayJob's RayCluster, a
	// TrainJob's JobSet, an MPIJob's launcher Job, an AppWrapper's
	// components, a Spark driver's executors) are not controlled by the
	// job, and their controller may be gone (garbage collected with the
	// job) while they still run through their grace period. The label
	// lets the job's Workload keep its quota until they are gone.
	PodJobUIDLabel = "kuota.dev/job-uid"

	// DefaultLocalQueueName is the LocalQueue a job without a queue name
	// is sent to, when it exists in the job's namespace.
	DefaultLocalQueueName = "default"

	// MultiKueueWorkerPodLabel ("true") marks the copies of a manager's
	// pods that MultiKueue creates in a worker cluster: the manager
	// completed them already (their parent is not in the worker).
	MultiKueueWorkerPodLabel = "kueue.x-k8s.io/multikueue-worker-workload-pod"
)
