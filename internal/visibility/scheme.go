// Package visibility serves the pending-workloads API
// (visibility.kueue.x-k8s.io, v1beta2 and v1beta1) from the manager
// process as an aggregated API: kube-apiserver forwards
// GET /apis/visibility.kueue.x-k8s.io/<version>/clusterqueues/<cq>/pendingworkloads
// and .../namespaces/<ns>/localqueues/<lq>/pendingworkloads to it through
// the APIService objects of the install bundle.
//
// It is a k8s.io/apiserver generic API server: callers are authenticated
// by the front-proxy client certificate kube-apiserver presents (the
// request-header CA and names come from the kube-system/
// extension-apiserver-authentication ConfigMap) or by TokenReview, and
// authorized with SubjectAccessReviews, so RBAC on
// clusterqueues/pendingworkloads and localqueues/pendingworkloads applies
// as it does for Kueue. Answers come from the manager's cache (the live
// pending queues), never from the API server.
package visibility

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	visibilityapi "github.com/kuota-dev/kuota/api/visibility/v1beta2"
)

// Versions are the served versions, preferred first.
var Versions = []schema.GroupVersion{visibilityapi.GroupVersion, visibilityapi.GroupVersionV1beta1}

// newScheme registers the API's kinds under every served version, and the
// meta kinds the generic server answers with (Status, discovery).
func newScheme() (*runtime.Scheme, serializer.CodecFactory, error) {
	s := runtime.NewScheme()
	for _, gv := range Versions {
		if err := visibilityapi.AddToSchemeAs(s, gv); err != nil {
			return nil, serializer.CodecFactory{}, fmt.Errorf("registering %s: %w", gv, err)
		}
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	s.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{},
		&metav1.APIGroup{}, &metav1.APIResourceList{})
	return s, serializer.NewCodecFactory(s), nil
}
