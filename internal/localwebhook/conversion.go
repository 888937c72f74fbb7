package localwebhook

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// registerConversion points the conversion of each CRD named in
// r.ConvertedCRDs at the local server's path r.ConversionPath. A CRD that is
// not installed is skipped; one already pointing there is not written.
//
// Unlike the webhook configurations, the conversion stays when the manager
// stops: with no conversion the API server would store a v1beta1 object
// with its renamed fields dropped, while a dead webhook makes the v1beta1
// request fail and say why. Requests in v1beta2, the stored version, never
// call it.
func (r *Registrar) registerConversion(ctx context.Context) error {
	if r.ConversionPath == "" || (r.Served != nil && !r.Served(r.ConversionPath)) {
		return nil
	}
	want := &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(r.baseURL() + r.ConversionPath), CABundle: r.CABundle},
			ConversionReviewVersions: []string{"v1"},
		},
	}
	changed := false
	for _, name := range r.ConvertedCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.Reader.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading CRD %s: %w", name, err)
		}
		if sameConversion(crd.Spec.Conversion, want) {
			continue
		}
		crd.Spec.Conversion = want.DeepCopy()
		if err := r.Writer.Update(ctx, crd, client.FieldOwner(FieldOwner)); err != nil {
			return fmt.Errorf("pointing the conversion of CRD %s at %s: %w", name, r.baseURL(), err)
		}
		changed = true
	}
	if changed {
		return r.waitConversion(ctx)
	}
	return nil
}

// conversionProbes are v1beta1 objects whose renamed fields a conversion
// by the API server alone (strategy None) would drop: each is created in a
// dry run until the answer keeps the field, which shows that the API
// server has taken up the new conversion. A v1beta1 manifest applied just
// after the manager starts would otherwise be stored without them.
var conversionProbes = []struct {
	crd, manifest string
	kept          []string
}{
	{"clusterqueues.kueue.x-k8s.io", `{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
	  "metadata":{"generateName":"kuota-conversion-probe-"},"spec":{"cohort":"kuota-conversion-probe"}}`, []string{"spec", "cohort"}},
	{"workloads.kueue.x-k8s.io", `{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload",
	  "metadata":{"generateName":"kuota-conversion-probe-","namespace":"default"},
	  "spec":{"priorityClassName":"kuota-conversion-probe","priorityClassSource":"scheduling.k8s.io/priorityclass","priority":0,
	    "podSets":[{"name":"main","count":1,"template":{"spec":{"containers":[{"name":"c","image":"probe"}]}}}]}}`,
		[]string{"spec", "priorityClassName"}},
	{"multikueueclusters.kueue.x-k8s.io", `{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"MultiKueueCluster",
	  "metadata":{"generateName":"kuota-conversion-probe-"},"spec":{"kubeConfig":{"location":"probe","locationType":"Secret"}}}`,
		[]string{"spec", "kubeConfig", "location"}},
}

// waitConversion waits, up to 30 s per kind, until the API server converts
// through the webhook; past that it gives up with an error naming the kind.
func (r *Registrar) waitConversion(ctx context.Context) error {
	for _, p := range conversionProbes {
		if !slices.Contains(r.ConvertedCRDs, p.crd) {
			continue
		}
		var last error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON([]byte(p.manifest)); err != nil {
				return false, err
			}
			if err := r.Writer.Create(ctx, obj, client.DryRunAll, client.FieldOwner(FieldOwner)); err != nil {
				last = err
				return false, nil
			}
			if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, p.kept...); !found {
				last = fmt.Errorf("the API server still converts without the webhook")
				return false, nil
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for the API server to convert %s through the webhook: %w (last: %v)", p.crd, err, last)
		}
	}
	return nil
}

func sameConversion(cur, want *apiextensionsv1.CustomResourceConversion) bool {
	if cur == nil || cur.Strategy != want.Strategy || cur.Webhook == nil || cur.Webhook.ClientConfig == nil {
		return false
	}
	cc, wc := cur.Webhook.ClientConfig, want.Webhook.ClientConfig
	return cc.Service == nil && ptr.Deref(cc.URL, "") == *wc.URL && bytes.Equal(cc.CABundle, wc.CABundle)
}
