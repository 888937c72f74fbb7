package validation

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// exampleValidators validate a decoded example object of each kind this
// package checks.
var exampleValidators = map[string]func([]byte) (field.ErrorList, error){
	"ResourceFlavor": validateJSON(ValidateResourceFlavor),
	"ClusterQueue":   validateJSON(ValidateClusterQueue),
	"Cohort":         validateJSON(ValidateCohort),
	"Workload":       validateJSON(ValidateWorkload),
}

func validateJSON[T any](validate func(*T) field.ErrorList) func([]byte) (field.ErrorList, error) {
	return func(data []byte) (field.ErrorList, error) {
		obj := new(T)
		if err := json.Unmarshal(data, obj); err != nil {
			return nil, err
		}
		return validate(obj), nil
	}
}

// TestKueueExamplesAreValid: users' existing manifests must pass.
func TestKueueExamplesAreValid(t *testing.T) {
	examples := testutil.KueueExamples(t, kueue.GroupVersion.Group, func(kind string) bool { return exampleValidators[kind] != nil })
	if len(examples) < 30 {
		t.Fatalf("found only %d ResourceFlavor/ClusterQueue/Cohort/Workload objects in the examples; the reference data looks incomplete", len(examples))
	}
	for _, ex := range examples {
		kind, name := ex.Obj.GetKind(), ex.Obj.GetName()
		data, err := ex.Obj.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: encoding %s %s: %v", ex.File, kind, name, err)
		}
		errs, err := exampleValidators[kind](data)
		if err != nil {
			t.Errorf("%s: %s %s does not decode: %v", ex.File, kind, name, err)
			continue
		}
		if len(errs) > 0 {
			t.Errorf("%s: %s %s rejected: %v", ex.File, kind, name, errs.ToAggregate())
		}
	}
	t.Logf("validated %d example objects", len(examples))
}
