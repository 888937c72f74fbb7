// Package conversion converts Kueue's kinds between kueue.x-k8s.io/v1beta1
// and v1beta2, and serves the API server's conversion webhook (/convert) for
// the CRDs whose two versions differ in shape: LocalQueue, ClusterQueue,
// Cohort, Workload and MultiKueueCluster. v1beta2 is the stored version.
package conversion

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kuota-dev/kuota/api/kueue/v1beta1"
	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Path is where the manager serves the conversion webhook.
const Path = "/convert"

// The manager may update the CRDs of Kinds: their conversion's CA bundle
// or, in local mode, its address.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,resourceNames=clusterqueues.kueue.x-k8s.io;localqueues.kueue.x-k8s.io;cohorts.kueue.x-k8s.io;workloads.kueue.x-k8s.io;multikueueclusters.kueue.x-k8s.io,verbs=get;update

// Kinds are the kinds converted by webhook, by their CRD's plural.
var Kinds = map[string]string{
	"clusterqueues":      "ClusterQueue",
	"localqueues":        "LocalQueue",
	"cohorts":            "Cohort",
	"workloads":          "Workload",
	"multikueueclusters": "MultiKueueCluster",
}

// CRDNames are the names of the CRDs of Kinds, sorted.
func CRDNames() []string {
	out := make([]string, 0, len(Kinds))
	for plural := range Kinds {
		out = append(out, plural+"."+v1beta2.GroupVersion.Group)
	}
	slices.Sort(out)
	return out
}

// maxReviewBytes bounds a request body; the API server sends at most a
// list's worth of objects (its own request limit is 3 MiB per object).
const maxReviewBytes = 64 << 20

// Handler serves ConversionReviews (apiextensions.k8s.io/v1).
type Handler struct{}

func (Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "conversion reviews are POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes+1))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxReviewBytes {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return
	}
	review := &apiextensionsv1.ConversionReview{}
	if err := json.Unmarshal(body, review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not a ConversionReview with a request: %v", err), http.StatusBadRequest)
		return
	}
	review.Response = Review(review.Request)
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// Review converts every object of req to its desired version. On any
// failure the response is a failure naming the object and the field, and
// carries no object: the API server then fails the request.
func Review(req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionResponse {
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for i, obj := range req.Objects {
		out, err := Convert(obj.Raw, req.DesiredAPIVersion)
		if err != nil {
			return &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{
				Status: metav1.StatusFailure, Reason: metav1.StatusReasonBadRequest,
				Message: fmt.Sprintf("converting objects[%d] to %s: %v", i, req.DesiredAPIVersion, err),
			}}
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	return resp
}

// Convert converts one object, as JSON, to apiVersion.
func Convert(raw []byte, apiVersion string) ([]byte, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if tm.APIVersion == apiVersion {
		return raw, nil
	}
	up := tm.APIVersion == v1beta1.GroupVersion.String() && apiVersion == v1beta2.GroupVersion.String()
	down := tm.APIVersion == v1beta2.GroupVersion.String() && apiVersion == v1beta1.GroupVersion.String()
	if !up && !down {
		return nil, fmt.Errorf("apiVersion: cannot convert %q to %q", tm.APIVersion, apiVersion)
	}
	c, ok := converters[tm.Kind]
	if !ok {
		return nil, fmt.Errorf("kind: %q is not converted by this webhook", tm.Kind)
	}
	convert := c.down
	if up {
		convert = c.up
	}
	out, err := convert(raw)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", tm.Kind, objectName(raw), err)
	}
	return json.Marshal(out)
}

type converter struct{ up, down func([]byte) (any, error) }

var converters = map[string]converter{
	"ClusterQueue": {
		up:   via(func(in *v1beta1.ClusterQueue) (any, error) { return ClusterQueueUp(in), nil }),
		down: via(func(in *v1beta2.ClusterQueue) (any, error) { return ClusterQueueDown(in), nil }),
	},
	"LocalQueue": {
		up:   via(func(in *v1beta1.LocalQueue) (any, error) { return LocalQueueUp(in), nil }),
		down: via(func(in *v1beta2.LocalQueue) (any, error) { return LocalQueueDown(in), nil }),
	},
	"Cohort": {
		up:   via(func(in *v1beta1.Cohort) (any, error) { return CohortUp(in), nil }),
		down: via(func(in *v1beta2.Cohort) (any, error) { return CohortDown(in), nil }),
	},
	"MultiKueueCluster": {
		up:   via(func(in *v1beta1.MultiKueueCluster) (any, error) { return MultiKueueClusterUp(in), nil }),
		down: via(func(in *v1beta2.MultiKueueCluster) (any, error) { return MultiKueueClusterDown(in), nil }),
	},
	"Workload": {
		up:   via(func(in *v1beta1.Workload) (any, error) { return WorkloadUp(in) }),
		down: via(func(in *v1beta2.Workload) (any, error) { return WorkloadDown(in) }),
	},
}

// via decodes the JSON into T and converts it.
func via[T any](f func(*T) (any, error)) func([]byte) (any, error) {
	return func(raw []byte) (any, error) {
		in := new(T)
		if err := json.Unmarshal(raw, in); err != nil {
			return nil, err
		}
		return f(in)
	}
}

func objectName(raw []byte) string {
	var m struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Metadata.Name == "" {
		return "(unnamed)"
	}
	if m.Metadata.Namespace != "" {
		return m.Metadata.Namespace + "/" + m.Metadata.Name
	}
	return m.Metadata.Name
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
