package app

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// metaItems returns the keys of the objects of a list.
func metaItems(list client.ObjectList) ([]types.NamespacedName, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("reading %T: %w", list, err)
	}
	out := make([]types.NamespacedName, 0, len(objs))
	for _, o := range objs {
		acc, err := meta.Accessor(o)
		if err != nil {
			return nil, fmt.Errorf("reading an item of %T: %w", list, err)
		}
		out = append(out, types.NamespacedName{Namespace: acc.GetNamespace(), Name: acc.GetName()})
	}
	return out, nil
}
