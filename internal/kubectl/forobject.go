package kubectl

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// forObject is the job a --for flag names, found.
type forObject struct {
	*unstructured.Unstructured
	gvk schema.GroupVersionKind
}

// resolveFor finds the object of --for TYPE[.API-GROUP]/NAME in the
// session's namespace (or any, with allNamespaces). It returns nil when
// there is none.
func (k *kit) resolveFor(ctx context.Context, s *session, spec string, allNamespaces bool) (*forObject, error) {
	resource, name, ok := strings.Cut(spec, "/")
	if !ok || resource == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("invalid --for value %q: must be TYPE[.API-GROUP]/NAME", spec)
	}
	mapper, err := k.flags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("building the REST mapper: %w", err)
	}
	full, partial := schema.ParseResourceArg(strings.ToLower(resource))
	var gvr schema.GroupVersionResource
	if full != nil {
		gvr, _ = mapper.ResourceFor(*full)
	}
	if gvr.Empty() {
		if gvr, err = mapper.ResourceFor(partial.WithVersion("")); err != nil {
			return nil, fmt.Errorf("--for %s: %w", spec, err)
		}
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("--for %s: %w", spec, err)
	}
	if !allNamespaces {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		err := s.client.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("--for %s: %w", spec, err)
		}
		return &forObject{Unstructured: obj, gvk: gvk}, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := s.client.List(ctx, list, client.MatchingFields{"metadata.name": name}); err != nil {
		return nil, fmt.Errorf("--for %s: %w", spec, err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &forObject{Unstructured: &list.Items[0], gvk: gvk}, nil
}
