package appwrapper

import (
	"strings"
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	"k8s.io/utils/ptr"
)

func errorsOf(t *testing.T, old, aw *awv1beta2.AppWrapper) string {
	t.Helper()
	errs := Validate(New(old), New(aw))
	if len(errs) == 0 {
		return ""
	}
	return errs.ToAggregate().Error()
}

// Bad queued AppWrappers are refused with an error naming the field.
func TestValidateRefusesBadInput(t *testing.T) {
	cases := map[string]struct {
		mutate func(*awv1beta2.AppWrapper)
		field  string
	}{
		"path leads nowhere": {func(aw *awv1beta2.AppWrapper) { aw.Spec.Components[1].DeclaredPodSets[0].Path = "template.spec.x" },
			"spec.components[1].podSets[0].path"},
		"negative replicas": {func(aw *awv1beta2.AppWrapper) { aw.Spec.Components[1].DeclaredPodSets[0].Replicas = ptr.To[int32](-1) },
			"spec.components[1].podSets[0].replicas"},
		"template not an object": {func(aw *awv1beta2.AppWrapper) { aw.Spec.Components[0].Template.Raw = []byte(`[1]`) },
			"spec.components[0].template"},
		"no components": {func(aw *awv1beta2.AppWrapper) { aw.Spec.Components = nil }, "spec.components"},
		"name too long": {func(aw *awv1beta2.AppWrapper) { aw.Name = strings.Repeat("a", 62) }, "metadata.name"},
		"too many podsets": {func(aw *awv1beta2.AppWrapper) {
			for range MaxPodSets {
				aw.Spec.Components = append(aw.Spec.Components, aw.Spec.Components[0])
			}
		}, "spec.components"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			aw := newAppWrapper(t)
			tc.mutate(aw)
			errs := Validate(nil, New(aw))
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.field) {
				t.Fatalf("errors %v, want one naming %s", errs, tc.field)
			}
		})
	}
	if errs := Validate(nil, New(newAppWrapper(t))); len(errs) != 0 {
		t.Fatalf("a good AppWrapper is refused: %v", errs)
	}
	unqueued := newAppWrapper(t)
	unqueued.Labels = nil
	unqueued.Spec.Components = nil
	if errs := Validate(nil, New(unqueued)); len(errs) != 0 {
		t.Fatalf("an AppWrapper without a queue is not Kuota's to check: %v", errs)
	}
}

// A running AppWrapper's components cannot change; podSetInfos may, and a
// suspended one may change.
func TestValidateRunningComponents(t *testing.T) {
	old := newAppWrapper(t)
	changed := old.DeepCopy()
	changed.Spec.Components[1] = deploymentComponent(t, 5)
	if msg := errorsOf(t, old, changed); !strings.Contains(msg, "spec.components") || !strings.Contains(msg, "while the AppWrapper runs") {
		t.Fatalf("errors %q, want spec.components forbidden while running", msg)
	}
	infos := old.DeepCopy()
	infos.Spec.Components[0].PodSetInfos = []awv1beta2.AppWrapperPodSetInfo{{NodeSelector: map[string]string{"a": "b"}}}
	if msg := errorsOf(t, old, infos); msg != "" {
		t.Fatalf("writing podSetInfos is refused: %s", msg)
	}
	suspended := old.DeepCopy()
	suspended.Spec.Suspend = true
	changed.Spec.Suspend = true
	if msg := errorsOf(t, suspended, changed); msg != "" {
		t.Fatalf("changing a suspended AppWrapper is refused: %s", msg)
	}
}
