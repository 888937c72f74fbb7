package workload

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rawMergePatch is a JSON merge patch with a fixed body.
func rawMergePatch(body []byte) client.Patch { return client.RawPatch(types.MergePatchType, body) }
