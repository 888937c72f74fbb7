package visibility

import (
	extensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/common"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	visibilityapi "github.com/kuota-dev/kuota/api/visibility/v1beta2"
)

// openAPIDefinitions describes the API's kinds for the generic server
// (which needs them to serve /openapi and to build its type converter).
// The meta kinds come from apiextensions-apiserver's generated
// definitions; the few kinds of this API are written out here rather than
// generated, since they hold a handful of fields.
func openAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := extensionsopenapi.GetOpenAPIDefinitions(ref)
	objectMeta, listMeta := metav1.ObjectMeta{}.OpenAPIModelName(), metav1.ListMeta{}.OpenAPIModelName()
	name := func(o any) string { return openapiutil.GetCanonicalTypeName(o) }
	summary, pending := name(&visibilityapi.PendingWorkloadsSummary{}), name(&visibilityapi.PendingWorkload{})
	queue := func(desc string) common.OpenAPIDefinition {
		return object(desc, map[string]spec.Schema{
			"kind": str("Kind of the object."), "apiVersion": str("Version of the object's schema."),
			"metadata":                refTo(ref, objectMeta, "Standard object metadata."),
			"pendingWorkloadsSummary": refTo(ref, summary, "The queue's pending workloads."),
		}, []string{"pendingWorkloadsSummary"}, objectMeta, summary)
	}
	list := func(desc, item string) common.OpenAPIDefinition {
		return object(desc, map[string]spec.Schema{
			"kind": str("Kind of the object."), "apiVersion": str("Version of the object's schema."),
			"metadata": refTo(ref, listMeta, "Standard list metadata."),
			"items":    arrayOf(refTo(ref, item, ""), "The items."),
		}, []string{"items"}, listMeta, item)
	}
	defs[name(&visibilityapi.ClusterQueue{})] = queue("A ClusterQueue's pending workloads.")
	defs[name(&visibilityapi.LocalQueue{})] = queue("A LocalQueue's pending workloads.")
	defs[name(&visibilityapi.ClusterQueueList{})] = list("ClusterQueue views.", name(&visibilityapi.ClusterQueue{}))
	defs[name(&visibilityapi.LocalQueueList{})] = list("LocalQueue views.", name(&visibilityapi.LocalQueue{}))
	defs[summary] = object("A page of pending workloads in the order the scheduler considers them.", map[string]spec.Schema{
		"kind": str("Kind of the object."), "apiVersion": str("Version of the object's schema."),
		"metadata": refTo(ref, objectMeta, "Standard object metadata."),
		"items":    arrayOf(refTo(ref, pending, ""), "The pending workloads."),
	}, []string{"items"}, objectMeta, pending)
	defs[pending] = object("A pending workload and its positions in its queues.", map[string]spec.Schema{
		"metadata":               refTo(ref, objectMeta, "The workload's name, namespace, creation time and owners."),
		"priority":               integer("int32", "The workload's effective priority."),
		"localQueueName":         str("The workload's LocalQueue."),
		"positionInClusterQueue": integer("int32", "0-based position in the ClusterQueue."),
		"positionInLocalQueue":   integer("int32", "0-based position in the LocalQueue."),
	}, []string{"priority", "localQueueName", "positionInClusterQueue", "positionInLocalQueue"}, objectMeta)
	defs[name(&visibilityapi.PendingWorkloadOptions{})] = object("Query parameters of a pendingworkloads request.", map[string]spec.Schema{
		"kind": str("Kind of the object."), "apiVersion": str("Version of the object's schema."),
		"offset": integer("int64", "Position of the first workload returned (default 0)."),
		"limit":  integer("int64", "Most workloads returned (default 1000, at most 100000)."),
	}, nil)
	return defs
}

func object(desc string, props map[string]spec.Schema, required []string, deps ...string) common.OpenAPIDefinition {
	return common.OpenAPIDefinition{
		Schema: spec.Schema{SchemaProps: spec.SchemaProps{
			Description: desc, Type: []string{"object"}, Properties: props, Required: required,
		}},
		Dependencies: deps,
	}
}

func str(desc string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Type: []string{"string"}, Default: ""}}
}

func integer(format, desc string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Type: []string{"integer"}, Format: format, Default: 0}}
}

func refTo(ref common.ReferenceCallback, name, desc string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Default: map[string]any{}, Ref: ref(name)}}
}

func arrayOf(item spec.Schema, desc string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Type: []string{"array"},
		Items: &spec.SchemaOrArray{Schema: &item}}}
}
