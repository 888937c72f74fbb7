package jobframework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// JobPodFinder finds the pods of one job, even once the job and the
// objects between it and its pods are gone: the pods labelled
// PodJobUIDLabel with its UID (every pod made from its admitted
// templates, through whatever child object), the pods it controls (those
// of a job started before Kuota labelled its pods), and those its
// integration's PodSelector selects.
type JobPodFinder struct {
	UID types.UID
	// Selector is the integration's PodSelector, nil when it has none.
	Selector labels.Selector
}

// FindJobPods is the finder of the pods of the job of in's kind with
// that UID.
func FindJobPods(in Integration, uid types.UID) JobPodFinder {
	f := JobPodFinder{UID: uid}
	if in.NewJob != nil {
		if j, ok := in.NewJob(nil).(JobWithPodSelector); ok {
			f.Selector = j.PodSelector(uid)
		}
	}
	return f
}

// Queries are the label selectors of the lists of the job's namespace
// that together hold all its pods; of what they return, keep the pods
// Has accepts. With a PodSelector, two small lists: that selector's and
// PodJobUIDLabel's (the kind's pods all carry one or the other). Without
// one, the whole namespace: the pods a job controls carry no label of it.
func (f JobPodFinder) Queries() []labels.Selector {
	if f.Selector == nil {
		return []labels.Selector{labels.Everything()}
	}
	return []labels.Selector{f.Selector, labels.SelectorFromSet(labels.Set{PodJobUIDLabel: string(f.UID)})}
}

// Has reports whether the pod (its metadata) is one of the job's.
func (f JobPodFinder) Has(pod metav1.Object) bool {
	if f.UID == "" {
		return false
	}
	if pod.GetLabels()[PodJobUIDLabel] == string(f.UID) {
		return true
	}
	if f.Selector != nil && f.Selector.Matches(labels.Set(pod.GetLabels())) {
		return true
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref != nil && ref.UID == f.UID
}

// ListJobPods lists from reader the pods in ns of the job of in's kind
// with that UID, each once.
func ListJobPods(ctx context.Context, reader client.Reader, in Integration, ns string, uid types.UID) ([]corev1.Pod, error) {
	f := FindJobPods(in, uid)
	var out []corev1.Pod
	seen := map[types.UID]bool{}
	for _, sel := range f.Queries() {
		var pods corev1.PodList
		if err := reader.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("listing the pods of job %s: %w", uid, err)
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if seen[p.UID] || !f.Has(p) {
				continue
			}
			seen[p.UID] = true
			out = append(out, *p)
		}
	}
	return out, nil
}
