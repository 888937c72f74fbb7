package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func resourceFlavor(spec kueue.ResourceFlavorSpec) *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "rf"}, Spec: spec}
}

func TestValidateResourceFlavor(t *testing.T) {
	taint := func(key, value string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Value: value, Effect: effect}
	}
	cases := map[string]struct {
		spec kueue.ResourceFlavorSpec
		want []string
	}{
		"empty": {},
		"valid labels, taints and tolerations": {spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"cloud.example.com/pool": "spot", "tier": ""},
			NodeTaints: []corev1.Taint{taint("spot", "true", corev1.TaintEffectNoSchedule), taint("spot", "true", corev1.TaintEffectNoExecute)},
			Tolerations: []corev1.Toleration{
				{Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule},
				{Operator: corev1.TolerationOpExists},
			},
		}},
		"label key": {
			spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"bad key": "x"}},
			want: []string{"spec.nodeLabels[bad key]"},
		},
		"label value": {
			spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "-spot-"}},
			want: []string{"spec.nodeLabels[pool]"},
		},
		"taint without key": {
			spec: kueue.ResourceFlavorSpec{NodeTaints: []corev1.Taint{taint("", "v", corev1.TaintEffectNoSchedule)}},
			want: []string{"spec.nodeTaints[0].key"},
		},
		"taint key": {
			spec: kueue.ResourceFlavorSpec{NodeTaints: []corev1.Taint{taint("a/b/c", "v", corev1.TaintEffectNoSchedule)}},
			want: []string{"spec.nodeTaints[0].key"},
		},
		"taint value": {
			spec: kueue.ResourceFlavorSpec{NodeTaints: []corev1.Taint{taint("spot", "not valid!", corev1.TaintEffectNoSchedule)}},
			want: []string{"spec.nodeTaints[0].value"},
		},
		"taints with the same key and effect": {
			spec: kueue.ResourceFlavorSpec{NodeTaints: []corev1.Taint{
				taint("spot", "a", corev1.TaintEffectNoSchedule), taint("other", "", corev1.TaintEffectNoSchedule),
				taint("spot", "b", corev1.TaintEffectNoSchedule),
			}},
			want: []string{"spec.nodeTaints[2]"},
		},
		"toleration key": {
			spec: kueue.ResourceFlavorSpec{Tolerations: []corev1.Toleration{{Key: "bad key", Operator: corev1.TolerationOpExists}}},
			want: []string{"spec.tolerations[0].key"},
		},
		"toleration value": {
			spec: kueue.ResourceFlavorSpec{Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "a b"}}},
			want: []string{"spec.tolerations[0].value"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateResourceFlavor(resourceFlavor(tc.spec)), tc.want...)
		})
	}
}

func TestValidateResourceFlavorUpdate(t *testing.T) {
	legacy := resourceFlavor(kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"bad key": "x"}})
	t.Run("metadata-only update of an invalid stored flavor", func(t *testing.T) {
		updated := legacy.DeepCopy()
		updated.Finalizers = nil
		updated.Labels = map[string]string{"team": "a"}
		expectPaths(t, ValidateResourceFlavorUpdate(legacy, updated))
	})
	t.Run("spec change is validated", func(t *testing.T) {
		updated := legacy.DeepCopy()
		updated.Spec.NodeLabels["other"] = "y"
		expectPaths(t, ValidateResourceFlavorUpdate(legacy, updated), "spec.nodeLabels[bad key]")
	})
	t.Run("valid spec change", func(t *testing.T) {
		old := resourceFlavor(kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "a"}})
		updated := resourceFlavor(kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "b"}})
		expectPaths(t, ValidateResourceFlavorUpdate(old, updated))
	})
}
