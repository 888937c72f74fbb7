// Package compat checks that the CustomResourceDefinitions Kuota generates for
// kueue.x-k8s.io/v1beta2 match Kueue's reference CRDs.
//
// A CRD version is flattened into a Snapshot: a map from a path such as
// ".spec.resourceGroups[].flavors[].resources[].nominalQuota" (".x[]" for
// array items, ".x{}" for additionalProperties) to the facts of the schema node
// at that path (type, format, enum, default, bounds, x-kubernetes-* markers,
// number of CEL rules, ...). CRD-level facts (names, scope, subresources,
// printer columns, selectable fields) live under the paths "crd" and
// "printerColumns[<name>]". Descriptions are ignored. Compare diffs two
// snapshots into a Report.
//
// The compat test (go test ./test/compat/...) reads Kueue's CRDs from
// <repo>/../shared/compat/crds (or $KUOTA_SHARED_DIR/compat/crds) and ours
// from <repo>/config/crd/bases.
package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Paths of the nodes that do not come from the openAPIV3Schema walk.
const (
	// RootPath is the path of the openAPIV3Schema root.
	RootPath = "."
	// CRDPath holds the CRD-level and version-level facts.
	CRDPath = "crd"
)

// Facts maps a fact name (mostly the JSON Schema keyword, e.g. "type",
// "x-kubernetes-list-type") to its canonical string value. Unset facts are
// absent.
type Facts map[string]string

// Node is one flattened schema node (or CRD-level pseudo node).
type Node struct {
	// Parent is the path of the enclosing node; "" for top-level nodes.
	Parent string
	Facts  Facts
}

// Snapshot is the flattened, comparable view of one version of a CRD.
type Snapshot struct {
	// CRD is the CRD's metadata.name.
	CRD string
	// Version is the version that was flattened.
	Version string
	// Nodes maps a path to its node.
	Nodes map[string]Node
}

// LoadCRD reads one CustomResourceDefinition from a YAML (or JSON) file.
func LoadCRD(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading CRD: %w", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return nil, fmt.Errorf("parsing CRD %s: %w", file, err)
	}
	if crd.Kind != "CustomResourceDefinition" {
		return nil, fmt.Errorf("%s: kind is %q, want CustomResourceDefinition", file, crd.Kind)
	}
	return crd, nil
}

// FindVersion returns the named version of crd.
func FindVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensionsv1.CustomResourceDefinitionVersion, error) {
	var have []string
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			return &crd.Spec.Versions[i], nil
		}
		have = append(have, crd.Spec.Versions[i].Name)
	}
	return nil, fmt.Errorf("CRD %s has no version %q (has %v)", crd.Name, version, have)
}

// LoadSnapshot loads a CRD file and flattens the given version.
func LoadSnapshot(file, version string) (*Snapshot, error) {
	crd, err := LoadCRD(file)
	if err != nil {
		return nil, err
	}
	snap, err := Flatten(crd, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return snap, nil
}

// Flatten builds the Snapshot of one version of crd.
func Flatten(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Snapshot, error) {
	v, err := FindVersion(crd, version)
	if err != nil {
		return nil, err
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CRD %s version %s has no openAPIV3Schema", crd.Name, version)
	}
	nodes := map[string]Node{}
	addCRDNodes(nodes, crd, v)
	walkSchema(nodes, RootPath, "", v.Schema.OpenAPIV3Schema)
	return &Snapshot{CRD: crd.Name, Version: version, Nodes: nodes}, nil
}

// Len is the number of paths in the snapshot.
func (s *Snapshot) Len() int { return len(s.Nodes) }

// Paths returns all paths, sorted.
func (s *Snapshot) Paths() []string {
	out := make([]string, 0, len(s.Nodes))
	for p := range s.Nodes {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ChildPath joins a property name onto a schema path.
func ChildPath(parent, name string) string {
	if parent == RootPath {
		return RootPath + name
	}
	return parent + "." + name
}

// PrinterColumnPath is the path of the printer column with the given name.
func PrinterColumnPath(name string) string {
	return "printerColumns[" + name + "]"
}

func walkSchema(nodes map[string]Node, path, parent string, s *apiextensionsv1.JSONSchemaProps) {
	nodes[path] = Node{Parent: parent, Facts: schemaFacts(s)}
	for name := range s.Properties {
		prop := s.Properties[name]
		walkSchema(nodes, ChildPath(path, name), path, &prop)
	}
	if s.Items != nil {
		if s.Items.Schema != nil {
			walkSchema(nodes, path+"[]", path, s.Items.Schema)
		}
		for i := range s.Items.JSONSchemas {
			walkSchema(nodes, fmt.Sprintf("%s[%d]", path, i), path, &s.Items.JSONSchemas[i])
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(nodes, path+"{}", path, s.AdditionalProperties.Schema)
	}
}

func schemaFacts(s *apiextensionsv1.JSONSchemaProps) Facts {
	f := Facts{}
	addBasicFacts(f, s)
	addBoundFacts(f, s)
	addKubeFacts(f, s)
	addCompositionFacts(f, s)
	return f
}

func addBasicFacts(f Facts, s *apiextensionsv1.JSONSchemaProps) {
	setString(f, "type", s.Type)
	setString(f, "format", s.Format)
	setString(f, "pattern", s.Pattern)
	setBool(f, "nullable", s.Nullable)
	setBool(f, "uniqueItems", s.UniqueItems)
	if s.Default != nil {
		f["default"] = canonicalJSON(s.Default.Raw)
	}
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			vals = append(vals, canonicalJSON(e.Raw))
		}
		f["enum"] = rawSet(vals)
	}
	if len(s.Required) > 0 {
		f["required"] = stringSet(s.Required)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema == nil {
		f["additionalProperties"] = strconv.FormatBool(s.AdditionalProperties.Allows)
	}
}

func addBoundFacts(f Facts, s *apiextensionsv1.JSONSchemaProps) {
	setFloat(f, "minimum", s.Minimum)
	setFloat(f, "maximum", s.Maximum)
	setFloat(f, "multipleOf", s.MultipleOf)
	setBool(f, "exclusiveMinimum", s.ExclusiveMinimum)
	setBool(f, "exclusiveMaximum", s.ExclusiveMaximum)
	setInt(f, "minLength", s.MinLength)
	setInt(f, "maxLength", s.MaxLength)
	setInt(f, "minItems", s.MinItems)
	setInt(f, "maxItems", s.MaxItems)
	setInt(f, "minProperties", s.MinProperties)
	setInt(f, "maxProperties", s.MaxProperties)
}

func addKubeFacts(f Facts, s *apiextensionsv1.JSONSchemaProps) {
	if s.XListType != nil {
		f["x-kubernetes-list-type"] = *s.XListType
	}
	if len(s.XListMapKeys) > 0 {
		f["x-kubernetes-list-map-keys"] = stringList(s.XListMapKeys)
	}
	if s.XMapType != nil {
		f["x-kubernetes-map-type"] = *s.XMapType
	}
	setBool(f, "x-kubernetes-int-or-string", s.XIntOrString)
	setBool(f, "x-kubernetes-embedded-resource", s.XEmbeddedResource)
	if s.XPreserveUnknownFields != nil {
		f["x-kubernetes-preserve-unknown-fields"] = strconv.FormatBool(*s.XPreserveUnknownFields)
	}
	if n := len(s.XValidations); n > 0 {
		f["x-kubernetes-validations"] = strconv.Itoa(n)
	}
}

// addCompositionFacts records anyOf/oneOf/allOf/not in a normalized form:
// every branch is flattened like a schema of its own (descriptions dropped)
// and the branches are sorted, so their order does not matter.
func addCompositionFacts(f Facts, s *apiextensionsv1.JSONSchemaProps) {
	for _, c := range []struct {
		name     string
		branches []apiextensionsv1.JSONSchemaProps
	}{{"anyOf", s.AnyOf}, {"oneOf", s.OneOf}, {"allOf", s.AllOf}} {
		if len(c.branches) == 0 {
			continue
		}
		vals := make([]string, 0, len(c.branches))
		for i := range c.branches {
			vals = append(vals, branchJSON(&c.branches[i]))
		}
		f[c.name] = rawSet(vals)
	}
	if s.Not != nil {
		f["not"] = branchJSON(s.Not)
	}
}

func branchJSON(s *apiextensionsv1.JSONSchemaProps) string {
	nodes := map[string]Node{}
	walkSchema(nodes, RootPath, "", s)
	var v any
	if len(nodes) == 1 {
		v = nodes[RootPath].Facts
	} else {
		m := make(map[string]Facts, len(nodes))
		for p, n := range nodes {
			m[p] = n.Facts
		}
		v = m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

func addCRDNodes(nodes map[string]Node, crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) {
	f := Facts{
		"name":     crd.Name,
		"group":    crd.Spec.Group,
		"kind":     crd.Spec.Names.Kind,
		"listKind": crd.Spec.Names.ListKind,
		"plural":   crd.Spec.Names.Plural,
		"singular": crd.Spec.Names.Singular,
		"scope":    string(crd.Spec.Scope),
		"served":   strconv.FormatBool(v.Served),
		"storage":  strconv.FormatBool(v.Storage),
	}
	setString(f, "shortNames", setOrEmpty(crd.Spec.Names.ShortNames))
	setString(f, "categories", setOrEmpty(crd.Spec.Names.Categories))
	setBool(f, "deprecated", v.Deprecated)
	if v.DeprecationWarning != nil {
		f["deprecationWarning"] = *v.DeprecationWarning
	}
	f["subresources.status"] = "false"
	if v.Subresources != nil && v.Subresources.Status != nil {
		f["subresources.status"] = "true"
	}
	if v.Subresources != nil && v.Subresources.Scale != nil {
		b, _ := json.Marshal(v.Subresources.Scale)
		f["subresources.scale"] = string(b)
	}
	if len(v.SelectableFields) > 0 {
		paths := make([]string, 0, len(v.SelectableFields))
		for _, sf := range v.SelectableFields {
			paths = append(paths, sf.JSONPath)
		}
		f["selectableFields"] = stringSet(paths)
	}
	names := make([]string, 0, len(v.AdditionalPrinterColumns))
	for _, c := range v.AdditionalPrinterColumns {
		names = append(names, c.Name)
		cf := Facts{
			"type":     c.Type,
			"jsonPath": c.JSONPath,
			"priority": strconv.FormatInt(int64(c.Priority), 10),
		}
		setString(cf, "format", c.Format)
		nodes[PrinterColumnPath(c.Name)] = Node{Parent: CRDPath, Facts: cf}
	}
	if len(names) > 0 {
		f["printerColumnOrder"] = stringList(names)
	}
	nodes[CRDPath] = Node{Facts: f}
}

func setString(f Facts, name, v string) {
	if v != "" {
		f[name] = v
	}
}

func setBool(f Facts, name string, v bool) {
	if v {
		f[name] = "true"
	}
}

func setInt(f Facts, name string, v *int64) {
	if v != nil {
		f[name] = strconv.FormatInt(*v, 10)
	}
}

func setFloat(f Facts, name string, v *float64) {
	if v != nil {
		f[name] = strconv.FormatFloat(*v, 'g', -1, 64)
	}
}

// canonicalJSON re-encodes a JSON value so that key order and whitespace do
// not matter. Numbers keep their literal spelling.
func canonicalJSON(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// rawSet sorts JSON-encoded values and joins them into a JSON array.
func rawSet(vals []string) string {
	sorted := append([]string(nil), vals...)
	sort.Strings(sorted)
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, v := range sorted {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(v)
	}
	buf.WriteByte(']')
	return buf.String()
}

// stringSet encodes strings as a sorted JSON array.
func stringSet(vals []string) string {
	sorted := append([]string(nil), vals...)
	sort.Strings(sorted)
	return stringList(sorted)
}

func setOrEmpty(vals []string) string {
	if len(vals) == 0 {
		return ""
	}
	return stringSet(vals)
}

// stringList encodes strings as a JSON array, keeping their order.
func stringList(vals []string) string {
	b, err := json.Marshal(vals)
	if err != nil {
		return fmt.Sprintf("%q", vals)
	}
	return string(b)
}
