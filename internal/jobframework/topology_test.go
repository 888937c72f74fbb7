package jobframework

import (
	"context"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	kvalidation "github.com/kuota-dev/kuota/internal/validation"
)

// tasJob is a Job of one PodSet "main" (count pods of the template of a
// batch/v1 Job) whose pods carry an index label, for the topology tests.
type tasJob struct {
	job   *batchv1.Job
	count int32
}

func (j *tasJob) Object() client.Object { return j.job }
func (j *tasJob) IsSuspended() bool     { return ptr.Deref(j.job.Spec.Suspend, false) }
func (j *tasJob) Suspend()              { j.job.Spec.Suspend = ptr.To(true) }
func (j *tasJob) PodSets() ([]kueue.PodSet, error) {
	return []kueue.PodSet{{Name: "main", Count: j.count, Template: *j.job.Spec.Template.DeepCopy()}}, nil
}
func (j *tasJob) RunWithPodSetsInfo(infos []PodSetInfo) error {
	return ApplyToTemplate(&j.job.Spec.Template, infos[0])
}
func (j *tasJob) RestorePodSetsInfo(infos []PodSetInfo) bool {
	return RestoreTemplate(&j.job.Spec.Template, infos[0])
}
func (j *tasJob) Finished() (string, bool, bool) { return "", false, false }
func (j *tasJob) IsActive() bool                 { return false }
func (j *tasJob) PodsReady() bool                { return false }
func (j *tasJob) PodIndex(*kueue.PodSet) PodIndex {
	return PodIndex{Label: "example.com/index", SubGroupLabel: "example.com/group", SubGroupCount: ptr.To[int32](2)}
}
func (j *tasJob) TemplatePath(kueue.PodSetReference) *field.Path {
	return field.NewPath("spec", "template")
}

var (
	_ JobWithPodIndex      = (*tasJob)(nil)
	_ JobWithTemplatePaths = (*tasJob)(nil)
)

func newTASJob(count int32, annotations map[string]string) *tasJob {
	return &tasJob{count: count, job: &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "uid", Labels: map[string]string{QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
		}},
	}}
}

func TestTopologyRequestFromAnnotations(t *testing.T) {
	index := PodIndex{Label: "example.com/index"}
	cases := map[string]struct {
		annotations map[string]string
		want        *kueue.PodSetTopologyRequest
		wantErr     string
	}{
		"no annotation":            {annotations: map[string]string{"other": "x"}},
		"index alone":              {annotations: map[string]string{PodGroupPodIndexLabelAnnotation: "example.com/index"}},
		"unconstrained false only": {annotations: map[string]string{PodSetUnconstrainedTopologyAnnotation: "false"}},
		"required": {annotations: map[string]string{PodSetRequiredTopologyAnnotation: "rack"},
			want: &kueue.PodSetTopologyRequest{Required: ptr.To("rack"), PodIndexLabel: ptr.To("example.com/index")}},
		"preferred": {annotations: map[string]string{PodSetPreferredTopologyAnnotation: "block"},
			want: &kueue.PodSetTopologyRequest{Preferred: ptr.To("block"), PodIndexLabel: ptr.To("example.com/index")}},
		"unconstrained": {annotations: map[string]string{PodSetUnconstrainedTopologyAnnotation: "true"},
			want: &kueue.PodSetTopologyRequest{Unconstrained: ptr.To(true), PodIndexLabel: ptr.To("example.com/index")}},
		"slice": {annotations: map[string]string{PodSetSliceRequiredTopologyAnnotation: "rack", PodSetSliceSizeAnnotation: "4",
			PodSetGroupNameAnnotation: "g"},
			want: &kueue.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To("rack"), PodSetSliceSize: ptr.To[int32](4),
				PodSetGroupName: ptr.To("g"), PodIndexLabel: ptr.To("example.com/index")}},
		"layers": {annotations: map[string]string{PodSetSliceRequiredTopologyConstraintsAnnotation: `[{"topology":"block","size":8},{"topology":"rack","size":4}]`},
			want: &kueue.PodSetTopologyRequest{PodIndexLabel: ptr.To("example.com/index"),
				PodsetSliceRequiredTopologyConstraints: []kueue.PodsetSliceRequiredTopologyConstraint{{Topology: "block", Size: 8}, {Topology: "rack", Size: 4}}}},
		"bad size":          {annotations: map[string]string{PodSetSliceSizeAnnotation: "four"}, wantErr: PodSetSliceSizeAnnotation},
		"bad unconstrained": {annotations: map[string]string{PodSetUnconstrainedTopologyAnnotation: "yes please"}, wantErr: PodSetUnconstrainedTopologyAnnotation},
		"bad layers":        {annotations: map[string]string{PodSetSliceRequiredTopologyConstraintsAnnotation: `{"topology":"rack"}`}, wantErr: PodSetSliceRequiredTopologyConstraintsAnnotation},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := TopologyRequest(tc.annotations, index)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && !equality.Semantic.DeepEqual(got, tc.want)) {
				t.Fatalf("request %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNewWorkloadCarriesTheTopologyRequest(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
	job := newTASJob(8, map[string]string{PodSetRequiredTopologyAnnotation: "example.com/rack"})
	wl, err := NewWorkload(context.Background(), c, job, jobGVK, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := wl.Spec.PodSets[0].TopologyRequest
	if tr == nil || ptr.Deref(tr.Required, "") != "example.com/rack" || ptr.Deref(tr.PodIndexLabel, "") != "example.com/index" ||
		ptr.Deref(tr.SubGroupIndexLabel, "") != "example.com/group" || ptr.Deref(tr.SubGroupCount, 0) != 2 {
		t.Fatalf("topology request %+v, want required rack with the job's index labels", tr)
	}
	plain, err := NewWorkload(context.Background(), c, newTASJob(8, nil), jobGVK, Options{})
	if err != nil || plain.Spec.PodSets[0].TopologyRequest != nil {
		t.Fatalf("a job without topology annotations gets no topology request (%v, %+v)", err, plain.Spec.PodSets[0].TopologyRequest)
	}
	if EquivalentPodSets(wl.Spec.PodSets, plain.Spec.PodSets) {
		t.Error("a changed topology request must make the PodSets differ (the pending Workload is replaced)")
	}
	bad := newTASJob(8, map[string]string{PodSetSliceSizeAnnotation: "x"})
	if _, err := NewWorkload(context.Background(), c, bad, jobGVK, Options{}); err == nil || !strings.Contains(err.Error(), PodSetSliceSizeAnnotation) {
		t.Errorf("a malformed annotation: %v, want an error naming it", err)
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := batchv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func TestValidateTopologyAnnotations(t *testing.T) {
	path := field.NewPath("spec", "template", "metadata", "annotations")
	at := func(key string, more ...string) string {
		return strings.Join(append([]string{path.Key(key).String()}, more...), "")
	}
	cases := map[string]struct {
		annotations map[string]string
		count       int32
		want        []string
	}{
		"required":      {annotations: map[string]string{PodSetRequiredTopologyAnnotation: "example.com/rack"}, count: 4},
		"slice":         {annotations: map[string]string{PodSetSliceRequiredTopologyAnnotation: "rack", PodSetSliceSizeAnnotation: "2"}, count: 4},
		"unconstrained": {annotations: map[string]string{PodSetUnconstrainedTopologyAnnotation: "true", PodSetGroupNameAnnotation: "g"}, count: 1},
		"required and preferred": {annotations: map[string]string{PodSetRequiredTopologyAnnotation: "rack", PodSetPreferredTopologyAnnotation: "block"},
			count: 4, want: []string{at(PodSetPreferredTopologyAnnotation)}},
		"all three": {annotations: map[string]string{PodSetRequiredTopologyAnnotation: "rack", PodSetPreferredTopologyAnnotation: "block",
			PodSetUnconstrainedTopologyAnnotation: "true"}, count: 4,
			want: []string{at(PodSetPreferredTopologyAnnotation), at(PodSetUnconstrainedTopologyAnnotation)}},
		"unconstrained false beside required": {annotations: map[string]string{PodSetRequiredTopologyAnnotation: "rack",
			PodSetUnconstrainedTopologyAnnotation: "false"}, count: 4},
		"unconstrained not a boolean": {annotations: map[string]string{PodSetUnconstrainedTopologyAnnotation: "sure"}, count: 4,
			want: []string{at(PodSetUnconstrainedTopologyAnnotation)}},
		"level not a label key": {annotations: map[string]string{PodSetRequiredTopologyAnnotation: "not a label"}, count: 4,
			want: []string{at(PodSetRequiredTopologyAnnotation)}},
		"size not a number": {annotations: map[string]string{PodSetSliceRequiredTopologyAnnotation: "rack", PodSetSliceSizeAnnotation: "two"},
			count: 4, want: []string{at(PodSetSliceSizeAnnotation)}},
		"size zero": {annotations: map[string]string{PodSetSliceRequiredTopologyAnnotation: "rack", PodSetSliceSizeAnnotation: "0"},
			count: 4, want: []string{at(PodSetSliceSizeAnnotation)}},
		"size above count": {annotations: map[string]string{PodSetSliceRequiredTopologyAnnotation: "rack", PodSetSliceSizeAnnotation: "8"},
			count: 4, want: []string{at(PodSetSliceSizeAnnotation)}},
		"size without slice": {annotations: map[string]string{PodSetSliceSizeAnnotation: "2"}, count: 4,
			want: []string{at(PodSetSliceSizeAnnotation)}},
		"slice without size": {annotations: map[string]string{PodSetSliceRequiredTopologyAnnotation: "rack"}, count: 4,
			want: []string{at(PodSetSliceSizeAnnotation)}},
		"layers": {annotations: map[string]string{PodSetSliceRequiredTopologyConstraintsAnnotation: `[{"topology":"block","size":4},{"topology":"rack","size":2}]`},
			count: 8},
		"layers not JSON": {annotations: map[string]string{PodSetSliceRequiredTopologyConstraintsAnnotation: `block:4`}, count: 8,
			want: []string{at(PodSetSliceRequiredTopologyConstraintsAnnotation)}},
		"four layers": {annotations: map[string]string{PodSetSliceRequiredTopologyConstraintsAnnotation: `[{"topology":"a","size":8},{"topology":"b","size":4},{"topology":"c","size":2},{"topology":"d","size":1}]`},
			count: 8, want: []string{at(PodSetSliceRequiredTopologyConstraintsAnnotation)}},
		"layer without topology nor size": {annotations: map[string]string{PodSetSliceRequiredTopologyConstraintsAnnotation: `[{}]`}, count: 8,
			want: []string{at(PodSetSliceRequiredTopologyConstraintsAnnotation, "[0].size"), at(PodSetSliceRequiredTopologyConstraintsAnnotation, "[0].topology")}},
		"layers that do not divide": {annotations: map[string]string{PodSetSliceRequiredTopologyConstraintsAnnotation: `[{"topology":"block","size":4},{"topology":"rack","size":3}]`},
			count: 8, want: []string{at(PodSetSliceRequiredTopologyConstraintsAnnotation, "[1].size")}},
		"layers with a single-layer slice": {annotations: map[string]string{PodSetSliceRequiredTopologyAnnotation: "rack", PodSetSliceSizeAnnotation: "2",
			PodSetSliceRequiredTopologyConstraintsAnnotation: `[{"topology":"block","size":4}]`}, count: 8,
			want: []string{at(PodSetSliceRequiredTopologyConstraintsAnnotation)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateTopologyAnnotations(tc.annotations, tc.count, path) {
				got = append(got, e.Field)
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("errors on %v, want %v", got, want)
			}
		})
	}
}

// topologyWebhook is a Webhook for tasJob objects.
func topologyWebhook() *Webhook {
	in := Integration{Name: "batch/job", GVK: jobGVK, NewJob: func(obj client.Object) Job {
		j, _ := obj.(*batchv1.Job)
		return &tasJob{job: j, count: ptr.Deref(j.Spec.Parallelism, 1)}
	}}
	return &Webhook{Integration: in}
}

func TestWebhookValidatesTopologyAnnotations(t *testing.T) {
	w := topologyWebhook()
	job := newTASJob(4, map[string]string{PodSetSliceRequiredTopologyAnnotation: "rack", PodSetSliceSizeAnnotation: "8"}).job
	job.Spec.Parallelism = ptr.To[int32](4)
	err := w.ValidateCreate(context.Background(), job)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]") {
		t.Fatalf("create with a slice larger than the job: %v, want Invalid naming the annotation", err)
	}
	// A running job whose annotations did not change is not judged again
	// (its parallelism went down, say), but a change is.
	old := job.DeepCopy()
	old.Spec.Parallelism = ptr.To[int32](8)
	old.Spec.Suspend = ptr.To(true)
	cur := old.DeepCopy()
	if err := w.ValidateUpdate(context.Background(), old, cur); err != nil {
		t.Fatalf("an unchanged valid job: %v", err)
	}
	cur.Spec.Template.Annotations[PodSetPreferredTopologyAnnotation] = "block"
	cur.Spec.Template.Annotations[PodSetRequiredTopologyAnnotation] = "rack"
	if err := w.ValidateUpdate(context.Background(), old, cur); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), PodSetPreferredTopologyAnnotation) {
		t.Fatalf("an update adding a second topology mode: %v, want Invalid", err)
	}
}

func TestTopologyAdmissionGatesAndRestores(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
	userGate := corev1.PodSchedulingGate{Name: "example.com/mine"}
	job := newTASJob(2, map[string]string{PodSetRequiredTopologyAnnotation: "rack"})
	job.job.Spec.Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{userGate}
	wl, err := NewWorkload(context.Background(), c, job, jobGVK, Options{})
	if err != nil {
		t.Fatal(err)
	}
	assignment := &kueue.TopologyAssignment{Levels: []string{"rack"}, Slices: []kueue.TopologyAssignmentSlice{{DomainCount: 1,
		ValuesPerLevel: []kueue.TopologyAssignmentSliceLevelValues{{Universal: ptr.To("r1")}},
		PodCounts:      kueue.TopologyAssignmentSlicePodCounts{Universal: ptr.To[int32](2)}}}}
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", TopologyAssignment: assignment}}}
	infos, err := AdmissionInfos(context.Background(), c, wl)
	if err != nil {
		t.Fatal(err)
	}
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	// Applying twice (a retried start) adds nothing twice.
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	tpl := job.job.Spec.Template
	if !slices.Equal(tpl.Spec.SchedulingGates, []corev1.PodSchedulingGate{userGate, {Name: TopologyGate}}) || tpl.Labels[TASLabel] != "true" {
		t.Fatalf("template after a topology admission: gates %v labels %v, want the user's gate, the topology gate and the tas label",
			tpl.Spec.SchedulingGates, tpl.Labels)
	}
	if !job.RestorePodSetsInfo(RestoreInfos(wl)) {
		t.Fatal("restoring must change the template")
	}
	tpl = job.job.Spec.Template
	if !slices.Equal(tpl.Spec.SchedulingGates, []corev1.PodSchedulingGate{userGate}) || tpl.Labels[TASLabel] != "" {
		t.Fatalf("template after restore: gates %v labels %v, want the user's gate only", tpl.Spec.SchedulingGates, tpl.Labels)
	}
	wl.Status.Admission.PodSetAssignments[0].TopologyAssignment = nil
	infos, err = AdmissionInfos(context.Background(), c, wl)
	if err != nil || len(infos[0].SchedulingGates) != 0 || infos[0].Labels[TASLabel] != "" {
		t.Fatalf("an admission without a topology assignment gates nothing: %+v (%v)", infos, err)
	}
}

func TestAsksForTopology(t *testing.T) {
	for a, want := range map[string]bool{
		PodSetRequiredTopologyAnnotation:                 true,
		PodSetSliceRequiredTopologyConstraintsAnnotation: true,
		PodSetGroupNameAnnotation:                        false,
		PodGroupPodIndexLabelAnnotation:                  false,
	} {
		if got := AsksForTopology(map[string]string{a: "x"}); got != want {
			t.Errorf("AsksForTopology(%s) = %v, want %v", a, got, want)
		}
	}
	if AsksForTopology(map[string]string{PodSetUnconstrainedTopologyAnnotation: "false"}) ||
		!AsksForTopology(map[string]string{PodSetUnconstrainedTopologyAnnotation: "true"}) {
		t.Error("unconstrained asks only when true")
	}
}

// FuzzTopologyAnnotations: reading and checking the annotations never
// panics; annotations the webhook accepts always read without error into a
// request the Workload's own validation accepts too.
func FuzzTopologyAnnotations(f *testing.F) {
	f.Add("rack", "", "", "", "", "", 4)
	f.Add("", "block", "true", "", "", "", 4)
	f.Add("", "", "", "rack", "2", "", 4)
	f.Add("", "", "", "", "", `[{"topology":"b","size":4},{"topology":"r","size":2}]`, 8)
	f.Add("", "", "false", "rack", "x", `[{}]`, 1)
	f.Fuzz(func(t *testing.T, required, preferred, unconstrained, slice, size, layers string, count int) {
		a := map[string]string{}
		for k, v := range map[string]string{PodSetRequiredTopologyAnnotation: required, PodSetPreferredTopologyAnnotation: preferred,
			PodSetUnconstrainedTopologyAnnotation: unconstrained, PodSetSliceRequiredTopologyAnnotation: slice,
			PodSetSliceSizeAnnotation: size, PodSetSliceRequiredTopologyConstraintsAnnotation: layers} {
			if v != "" {
				a[k] = v
			}
		}
		n := int32(count % 1000)
		errs := ValidateTopologyAnnotations(a, n, field.NewPath("metadata", "annotations"))
		tr, err := TopologyRequest(a, PodIndex{})
		if len(errs) > 0 {
			return
		}
		if err != nil {
			t.Fatalf("accepted annotations %v do not read: %v", a, err)
		}
		if tr == nil {
			if AsksForTopology(a) {
				t.Fatalf("annotations %v ask for a topology but make no request", a)
			}
			return
		}
		p := field.NewPath("topologyRequest")
		if wlErrs := kvalidation.ValidateTopologyRequest(tr, n, kvalidation.TopologyRequestFields{SliceTopology: p.Child("a"),
			SliceSize: p.Child("b"), SliceConstraints: p.Child("c")}); len(wlErrs) > 0 {
			t.Fatalf("accepted annotations %v make a request the Workload refuses: %v", a, wlErrs)
		}
	})
}
