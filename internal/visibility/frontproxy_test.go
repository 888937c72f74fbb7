package visibility

import (
	"context"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func authConfigMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: authConfigMapNamespace, Name: authConfigMapName}, Data: data}
}

// Where kube-apiserver forwards requests (its aggregation layer is on), the
// server looks up the front-proxy CA as usual; where it does not, the
// server skips the lookup (which would log an error every few seconds),
// keeps client certificates signed by the cluster's client CA, and says
// why once.
func TestFrontProxyLookup(t *testing.T) {
	for _, c := range []struct {
		name      string
		objects   []runtime.Object
		forbidden bool
		skip      bool
		clientCA  string
	}{
		{name: "aggregation on", objects: []runtime.Object{authConfigMap(map[string]string{requestHeaderCAKey: "front-proxy CA", clientCAKey: "client CA"})}},
		{name: "no front-proxy CA", objects: []runtime.Object{authConfigMap(map[string]string{clientCAKey: "client CA"})}, skip: true, clientCA: "client CA"},
		{name: "no ConfigMap", skip: true},
		{name: "ConfigMap not readable", forbidden: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := fake.NewClientset(c.objects...)
			if c.forbidden {
				cs.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(corev1.Resource("configmaps"), authConfigMapName, nil)
				})
			}
			authn := genericoptions.NewDelegatingAuthenticationOptions()
			why, err := withoutFrontProxy(context.Background(), cs, authn, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if authn.SkipInClusterLookup != c.skip || (why != "") != c.skip {
				t.Fatalf("skip lookup %v, message %q; want skip %v", authn.SkipInClusterLookup, why, c.skip)
			}
			if c.skip && !strings.Contains(why, requestHeaderCAKey) {
				t.Fatalf("message %q does not name the missing key", why)
			}
			if c.clientCA == "" {
				if authn.ClientCert.ClientCA != "" {
					t.Fatalf("client CA file %q set, want none", authn.ClientCert.ClientCA)
				}
				return
			}
			got, err := os.ReadFile(authn.ClientCert.ClientCA)
			if err != nil || string(got) != c.clientCA {
				t.Fatalf("client CA file holds %q (%v), want %q", got, err, c.clientCA)
			}
		})
	}
}
