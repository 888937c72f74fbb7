package app

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A manager whose namespace does not exist runs standalone: the Lease of
// leader election and the webhook certificate's Secret live in that
// namespace, so it runs without leader election and serves no webhooks,
// rather than retrying those writes forever without ever scheduling. That
// is a bare API server with only the CRDs applied: envtest, or Kueue's
// scalability runner starting the manager itself (--minimalKueue). An
// installed manager always has its namespace (the install bundle creates
// it), so nothing changes there.

// NamespaceMissing reports whether ns does not exist. An error other than
// NotFound (RBAC that does not allow reading namespaces, an API server
// that failed once) is returned, for the caller to log: it says nothing
// about the namespace.
func NamespaceMissing(ctx context.Context, c client.Reader, ns string) (bool, error) {
	err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsNotFound(err):
		return true, nil
	default:
		return false, fmt.Errorf("reading namespace %s: %w", ns, err)
	}
}
