package trainjob

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// The trainer's names Kuota relies on (trainer v2.3.0 pkg/constants).
const (
	// AncestorLabel, on a runtime's replicated job template, says which
	// step of the TrainJob the job runs.
	AncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step"
	// The steps: the trainer nodes and the two initializers.
	AncestorTrainer            = "trainer"
	AncestorDatasetInitializer = "dataset-initializer"
	AncestorModelInitializer   = "model-initializer"
	// NodeName is the name of the trainer's container (and, with MPI, of
	// the node replicated job).
	NodeName = "node"
)

// Runtime kinds a TrainJob's spec.runtimeRef may name.
var (
	TrainingRuntimeGVK        = schema.GroupVersionKind{Group: Group, Version: Version, Kind: "TrainingRuntime"}
	ClusterTrainingRuntimeGVK = schema.GroupVersionKind{Group: Group, Version: Version, Kind: "ClusterTrainingRuntime"}
)

// runtimeRef returns the kind and key of the runtime a TrainJob names. The
// kind defaults to ClusterTrainingRuntime and the group to
// trainer.kubeflow.org, as the CRD defaults them.
func runtimeRef(u *unstructured.Unstructured) (schema.GroupVersionKind, types.NamespacedName, error) {
	name, err := stringAt(u.Object, runtimeRefNamePath)
	if err != nil {
		return schema.GroupVersionKind{}, types.NamespacedName{}, err
	}
	kind, err := stringAt(u.Object, runtimeRefKindPath)
	if err != nil {
		return schema.GroupVersionKind{}, types.NamespacedName{}, err
	}
	group, err := stringAt(u.Object, runtimeRefGroupPath)
	if err != nil {
		return schema.GroupVersionKind{}, types.NamespacedName{}, err
	}
	if name == "" {
		return schema.GroupVersionKind{}, types.NamespacedName{}, fmt.Errorf("%s: must name a runtime", dotted(runtimeRefNamePath))
	}
	if group != "" && group != Group {
		return schema.GroupVersionKind{}, types.NamespacedName{}, fmt.Errorf("%s: %q is not supported, only %s", dotted(runtimeRefGroupPath), group, Group)
	}
	switch kind {
	case "", ClusterTrainingRuntimeGVK.Kind:
		return ClusterTrainingRuntimeGVK, types.NamespacedName{Name: name}, nil
	case TrainingRuntimeGVK.Kind:
		return TrainingRuntimeGVK, types.NamespacedName{Namespace: u.GetNamespace(), Name: name}, nil
	}
	return schema.GroupVersionKind{}, types.NamespacedName{}, fmt.Errorf("%s: %q is not supported, only %s or %s",
		dotted(runtimeRefKindPath), kind, TrainingRuntimeGVK.Kind, ClusterTrainingRuntimeGVK.Kind)
}

// readRuntime reads the runtime a TrainJob names. A runtime that does not
// exist is a *jobframework.MissingPrerequisiteError naming
// spec.runtimeRef.
func readRuntime(ctx context.Context, c client.Reader, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk, key, err := runtimeRef(u)
	if err != nil {
		return nil, err
	}
	rt := &unstructured.Unstructured{}
	rt.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, key, rt); err != nil {
		if apierrors.IsNotFound(err) {
			where := ""
			if key.Namespace != "" {
				where = " in namespace " + key.Namespace
			}
			return nil, &jobframework.MissingPrerequisiteError{Message: fmt.Sprintf(
				"spec.runtimeRef: %s %q does not exist%s; the TrainJob waits for it", gvk.Kind, key.Name, where)}
		}
		return nil, readError{fmt.Errorf("reading %s %s for spec.runtimeRef: %w", gvk.Kind, key, err)}
	}
	return rt, nil
}

// readError is a failure to read the runtime that a retry may resolve.
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }
func (e readError) Unwrap() error { return e.err }

// replicatedJob is one replicated job of the JobSet a TrainJob runs, as the
// trainer builds it from the runtime: one PodSet.
type replicatedJob struct {
	Name     string
	Replicas int32
	// PodsPerReplica is the pods each replica's Job runs at once.
	PodsPerReplica int32
	Template       corev1.PodTemplateSpec
}

// resolveJobs builds a TrainJob's replicated jobs from its runtime, as the
// trainer does for the quota-relevant parts: the runtime's JobSet template
// with the TrainJob's own runtime patches (not Kuota's) merged in; the
// initializers and the trainer run one replica; the trainer's node count
// is mlPolicy.numNodes, overridden by spec.trainer.numNodes (with MPI,
// the "node" job, one fewer when the launcher runs as a node); the
// trainer's "node" container gets spec.trainer.resourcesPerNode.
func resolveJobs(job, rt *unstructured.Unstructured) ([]replicatedJob, error) {
	var spec jobset.JobSetSpec
	if err := decodeAt(rt.Object, runtimeJobSetSpecPath, &spec); err != nil {
		return nil, fmt.Errorf("runtime %s: %w", rt.GetName(), err)
	}
	if err := applyUserPatches(job, &spec); err != nil {
		return nil, err
	}
	policy, err := readPolicy(job, rt)
	if err != nil {
		return nil, err
	}
	out := make([]replicatedJob, 0, len(spec.ReplicatedJobs))
	for i := range spec.ReplicatedJobs {
		rj := &spec.ReplicatedJobs[i]
		out = append(out, policy.apply(rj))
	}
	return out, nil
}

// policy is what of the runtime's mlPolicy and the TrainJob's trainer
// shapes the pods.
type policy struct {
	hasMLPolicy, mpi, launcherAsNode bool
	runtimeNodes                     int32
	numNodes                         *int32
	resources                        *corev1.ResourceRequirements
}

func readPolicy(job, rt *unstructured.Unstructured) (policy, error) {
	p := policy{runtimeNodes: 1}
	p.hasMLPolicy = nested(rt.Object, runtimeMLPolicyPath) != nil
	p.mpi = nested(rt.Object, runtimeMPIPath) != nil
	var err error
	if p.launcherAsNode, err = boolAt(rt.Object, runtimeRunLauncherAsNodePath); err != nil {
		return p, fmt.Errorf("runtime %s: %w", rt.GetName(), err)
	}
	if n, ok, err := int32At(rt.Object, runtimeNumNodesPath); err != nil {
		return p, fmt.Errorf("runtime %s: %w", rt.GetName(), err)
	} else if ok {
		p.runtimeNodes = n
	}
	if n, ok, err := int32At(job.Object, numNodesPath); err != nil {
		return p, err
	} else if ok {
		p.numNodes = &n
	}
	if nested(job.Object, resourcesPerNodePath) != nil {
		p.resources = &corev1.ResourceRequirements{}
		if err := decodeAt(job.Object, resourcesPerNodePath, p.resources); err != nil {
			return p, err
		}
	}
	return p, nil
}

// apply turns one runtime replicated job into what the trainer runs.
func (p policy) apply(rj *jobset.ReplicatedJob) replicatedJob {
	ancestor := rj.Template.Labels[AncestorLabel]
	trainer := ancestor == AncestorTrainer
	out := replicatedJob{Name: rj.Name, Replicas: max(rj.Replicas, 1), Template: *rj.Template.Spec.Template.DeepCopy()}
	if rj.Template.Spec.Parallelism != nil {
		out.PodsPerReplica = *rj.Template.Spec.Parallelism
	} else {
		out.PodsPerReplica = 1
	}
	if trainer || ancestor == AncestorDatasetInitializer || ancestor == AncestorModelInitializer {
		out.Replicas = 1
	}
	if trainer && p.hasMLPolicy {
		out.PodsPerReplica = p.runtimeNodes
	}
	if n := p.numNodes; n != nil {
		switch {
		case p.mpi && rj.Name == NodeName && p.launcherAsNode:
			out.PodsPerReplica = max(*n-1, 1)
		case p.mpi && rj.Name == NodeName:
			out.PodsPerReplica = *n
		case !p.mpi && trainer:
			out.PodsPerReplica = *n
		}
	}
	if p.resources != nil && ((trainer && p.hasMLPolicy) || (p.mpi && p.launcherAsNode && rj.Name == NodeName)) {
		for i := range out.Template.Spec.Containers {
			if c := &out.Template.Spec.Containers[i]; c.Name == NodeName {
				c.Resources = mergeResources(c.Resources, *p.resources)
				break
			}
		}
	}
	return out
}

// mergeResources overrides the runtime's requests and limits, name by
// name, with the TrainJob's.
func mergeResources(base, override corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := *base.DeepCopy()
	if len(override.Requests) > 0 && out.Requests == nil {
		out.Requests = corev1.ResourceList{}
	}
	maps.Copy(out.Requests, override.Requests)
	if len(override.Limits) > 0 && out.Limits == nil {
		out.Limits = corev1.ResourceList{}
	}
	maps.Copy(out.Limits, override.Limits)
	return out
}

// applyUserPatches merges the TrainJob's runtime patches other than
// Kuota's into the JobSet spec, in order, as strategic merge patches (as
// the trainer merges them), keeping the runtime's order of jobs.
func applyUserPatches(job *unstructured.Unstructured, spec *jobset.JobSetSpec) error {
	patches, err := listAt(job.Object, runtimePatchesPath)
	if err != nil {
		return err
	}
	order := map[string]int{}
	for i, rj := range spec.ReplicatedJobs {
		order[rj.Name] = i
	}
	for i, p := range patches {
		if m, _ := stringAt(p, patchManagerPath); m == PatchManager {
			continue
		}
		patch := nested(p, patchJobSpecPath)
		if patch == nil {
			continue
		}
		source, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(patch)
		if err != nil {
			return fmt.Errorf("%s[%d]: %w", dotted(runtimePatchesPath), i, err)
		}
		merged, err := strategicpatch.StrategicMergePatch(source, raw, jobset.JobSetSpec{})
		if err != nil {
			return fmt.Errorf("%s[%d]: cannot be merged into the runtime: %w", dotted(runtimePatchesPath), i, err)
		}
		var next jobset.JobSetSpec
		if err := json.Unmarshal(merged, &next); err != nil {
			return fmt.Errorf("%s[%d]: %w", dotted(runtimePatchesPath), i, err)
		}
		*spec = next
	}
	slices.SortStableFunc(spec.ReplicatedJobs, func(a, b jobset.ReplicatedJob) int {
		return rank(order, a.Name) - rank(order, b.Name)
	})
	return nil
}

// rank is a job's place in the runtime; jobs a patch adds go last.
func rank(order map[string]int, name string) int {
	if i, ok := order[name]; ok {
		return i
	}
	return len(order)
}
