//go:build crdsource

package trainjob

// This file is never compiled (the crdsource tag is never set). It imports
// the trainer's API package so that go.mod keeps requiring
// github.com/kubeflow/trainer/v2: the tests take the TrainJob,
// TrainingRuntime and ClusterTrainingRuntime CRDs from that module's
// manifests/base/crds (located with paths.ModuleDir, which downloads it). The package itself does
// not compile against the k8s.io/api Kuota builds with (its generated
// OpenAPI code names corev1.PodStatusResult, which k8s.io/api v0.37
// removed), so Kuota handles TrainJobs as unstructured objects instead.

import (
	_ "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)
