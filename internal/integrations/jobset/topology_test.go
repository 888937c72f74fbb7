package jobset

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestPodIndexOfAReplicatedJob(t *testing.T) {
	js := New(newJobSet()).(*JobSet)
	ps, err := js.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	ix := js.PodIndex(&ps[1])
	if ix.Label != batchv1.JobCompletionIndexAnnotation || ix.SubGroupLabel != jobsetapi.JobIndexKey || ptr.Deref(ix.SubGroupCount, 0) != 2 {
		t.Errorf("workers' index %+v, want the completion index within each of the 2 Jobs", ix)
	}
	if p := js.TemplatePath("workers"); p == nil || !strings.HasPrefix(p.String(), "spec.replicatedJobs[1].template.spec.template") {
		t.Errorf("template path %v", p)
	}
	var _ jobframework.JobWithPodIndex = js
}
