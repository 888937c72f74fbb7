package jobframework

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestLiveFallbackReadsThroughOnNotFound(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"x": "y"}}}
	cached := fake.NewClientBuilder().Build()
	live := fake.NewClientBuilder().WithObjects(ns).Build()
	r := LiveFallback{Cached: cached, Live: live}

	var got corev1.Namespace
	if err := r.Get(context.Background(), client.ObjectKey{Name: "team-a"}, &got); err != nil {
		t.Fatalf("namespace only the API server has: %v", err)
	}
	if got.Labels["x"] != "y" {
		t.Fatalf("read %+v, want the live object", got)
	}
	err := r.Get(context.Background(), client.ObjectKey{Name: "absent"}, &got)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("absent everywhere: err = %v, want NotFound", err)
	}
}
