package jobset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

func running() *jobsetapi.JobSet {
	js := newJobSet()
	js.Spec.Suspend = ptr.To(false)
	return js
}

func TestChangingReplicatedJobsWhileRunningIsForbidden(t *testing.T) {
	cases := []struct {
		name   string
		change func(js *jobsetapi.JobSet)
		field  string
	}{
		{"more replicas", func(js *jobsetapi.JobSet) { js.Spec.ReplicatedJobs[1].Replicas = 3 }, "spec.replicatedJobs[1].replicas"},
		{"more parallelism", func(js *jobsetapi.JobSet) { js.Spec.ReplicatedJobs[1].Template.Spec.Parallelism = ptr.To[int32](4) },
			"spec.replicatedJobs[1].template.spec.parallelism"},
		{"renamed", func(js *jobsetapi.JobSet) { js.Spec.ReplicatedJobs[0].Name = "leader" }, "spec.replicatedJobs[0].name"},
		{"added", func(js *jobsetapi.JobSet) {
			js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, replicatedJob("extra", 1, nil, nil, "1"))
		}, "spec.replicatedJobs"},
		{"more cpu", func(js *jobsetapi.JobSet) {
			js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("8")
		}, "spec.replicatedJobs[0].template.spec.template.spec.containers"},
	}
	for _, c := range cases {
		old, js := running(), running()
		c.change(js)
		errs := Validate(New(old), New(js))
		if len(errs) != 1 || errs[0].Field != c.field || errs[0].Type != field.ErrorTypeForbidden {
			t.Errorf("%s while running: errors %v, want one Forbidden at %s", c.name, errs, c.field)
			continue
		}
		if !strings.Contains(errs[0].Detail, "while the JobSet runs") {
			t.Errorf("%s: message %q does not say why", c.name, errs[0].Detail)
		}

		// The same change on a suspended JobSet is fine: its Workload
		// follows it.
		old, js = newJobSet(), newJobSet()
		c.change(js)
		if errs := Validate(New(old), New(js)); len(errs) != 0 {
			t.Errorf("%s while suspended: %v", c.name, errs)
		}
	}
}

func TestStartingAndStoppingPassValidation(t *testing.T) {
	old, js := newJobSet(), running()
	js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector["pool"] = "gpu"
	if errs := Validate(New(old), New(js)); len(errs) != 0 {
		t.Errorf("the admission starting the JobSet: %v", errs)
	}
	if errs := Validate(New(js), New(newJobSet())); len(errs) != 0 {
		t.Errorf("the eviction suspending it: %v", errs)
	}
}

func TestReplicatedJobsCountIsChecked(t *testing.T) {
	js := newJobSet()
	js.Spec.ReplicatedJobs = nil
	if errs := Validate(nil, New(js)); len(errs) != 1 || errs[0].Field != "spec.replicatedJobs" {
		t.Errorf("no replicated jobs: %v", errs)
	}
	js = newJobSet()
	for i := range MaxReplicatedJobs {
		js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, replicatedJob("r"+string(rune('a'+i)), 1, nil, nil, "1"))
	}
	if errs := Validate(nil, New(js)); len(errs) != 1 || errs[0].Type != field.ErrorTypeTooMany {
		t.Errorf("%d replicated jobs: %v", len(js.Spec.ReplicatedJobs), errs)
	}
	delete(js.Labels, "kueue.x-k8s.io/queue-name")
	if errs := Validate(nil, New(js)); len(errs) != 0 {
		t.Errorf("a JobSet Kuota does not queue is not its business: %v", errs)
	}
}
