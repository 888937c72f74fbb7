package v1beta2

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrEmptyConfiguration is returned when the data to decode holds no document.
var ErrEmptyConfiguration = errors.New("configuration is empty")

// Load reads the configuration file at path and returns it decoded,
// defaulted and validated, like Decode.
func Load(path string) (*Configuration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration file: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("configuration file %s: %w", path, err)
	}
	return cfg, nil
}

// Decode parses a YAML or JSON configuration strictly (see DecodeStrict),
// applies the defaults (an unset namespace comes from
// ServiceAccountNamespace) and validates the result. A validation failure is
// reported as one error naming every invalid field; it wraps the
// utilerrors.Aggregate built from the field.ErrorList.
func Decode(data []byte) (*Configuration, error) {
	cfg, err := DecodeStrict(data)
	if err != nil {
		return nil, err
	}
	SetDefaultsWithNamespace(cfg, ServiceAccountNamespace())
	if errs := Validate(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("invalid configuration: %w", errs.ToAggregate())
	}
	return cfg, nil
}

// DecodeStrict parses a YAML or JSON configuration without defaulting or
// validating it. It fails on empty input, on an apiVersion or kind other
// than config.kueue.x-k8s.io/v1beta2 (or v1beta1, converted first)
// Configuration, on unknown fields and on
// fields given twice. Field names are matched case-sensitively.
func DecodeStrict(data []byte) (*Configuration, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, ErrEmptyConfiguration
	}
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("parsing configuration: %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(jsonData), []byte("null")) {
		return nil, ErrEmptyConfiguration
	}
	version, err := checkTypeMeta(jsonData)
	if err != nil {
		return nil, err
	}
	if version == V1beta1 {
		if jsonData, err = upgradeV1beta1(jsonData); err != nil {
			return nil, err
		}
	}
	cfg := &Configuration{}
	strictErrs, err := kjson.UnmarshalStrict(jsonData, cfg)
	if err != nil {
		if path, valueErr := locateValueError(jsonData); valueErr != nil {
			return nil, fmt.Errorf("decoding configuration: %s: %w", path, valueErr)
		}
		return nil, fmt.Errorf("decoding configuration: %w", err)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("strict decoding of configuration: %w", errors.Join(strictErrs...))
	}
	return cfg, nil
}

// checkTypeMeta makes sure the document declares this package's kind, in
// v1beta2 or v1beta1, and returns its apiVersion.
func checkTypeMeta(jsonData []byte) (string, error) {
	var tm metav1.TypeMeta
	if err := kjson.UnmarshalCaseSensitivePreserveInts(jsonData, &tm); err != nil {
		return "", fmt.Errorf("decoding configuration: the document must be an object with apiVersion and kind: %w", err)
	}
	want := GroupVersion.String()
	switch {
	case tm.APIVersion == "":
		return "", fmt.Errorf("apiVersion is missing: want %q", want)
	case tm.APIVersion != want && tm.APIVersion != V1beta1:
		return "", fmt.Errorf("unsupported apiVersion %q: want %q (or %q)", tm.APIVersion, want, V1beta1)
	case tm.Kind == "":
		return "", fmt.Errorf("kind is missing: want %q", Kind)
	case tm.Kind != Kind:
		return "", fmt.Errorf("unsupported kind %q: want %q", tm.Kind, Kind)
	}
	return tm.APIVersion, nil
}
