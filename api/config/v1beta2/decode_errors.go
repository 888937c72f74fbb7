package v1beta2

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// locateValueError finds the first value in jsonData that its Go type's own
// UnmarshalJSON method rejects (a malformed duration or quantity, say) and
// returns the field path with the error. The JSON decoder reports such
// errors without saying where they happened. It returns "" and nil when no
// such value is found.
func locateValueError(jsonData []byte) (string, error) {
	var doc any
	if err := json.Unmarshal(jsonData, &doc); err != nil {
		return "", nil
	}
	return locateIn(doc, reflect.TypeFor[Configuration](), "")
}

func locateIn(value any, t reflect.Type, path string) (string, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if value == nil {
		return "", nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return checkUnmarshaler(value, t, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		if obj, ok := value.(map[string]any); ok {
			return locateInStruct(obj, t, path)
		}
	case reflect.Slice:
		if items, ok := value.([]any); ok {
			for i, item := range items {
				if p, err := locateIn(item, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
					return p, err
				}
			}
		}
	case reflect.Map:
		if obj, ok := value.(map[string]any); ok {
			for _, key := range slices.Sorted(maps.Keys(obj)) {
				if p, err := locateIn(obj[key], t.Elem(), path+"["+key+"]"); err != nil {
					return p, err
				}
			}
		}
	}
	return "", nil
}

func locateInStruct(obj map[string]any, t reflect.Type, path string) (string, error) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && f.Anonymous {
			if p, err := locateIn(obj, f.Type, path); err != nil {
				return p, err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		child := name
		if path != "" {
			child = path + "." + name
		}
		if p, err := locateIn(obj[name], f.Type, child); err != nil {
			return p, err
		}
	}
	return "", nil
}

func checkUnmarshaler(value any, t reflect.Type, path string) (string, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return "", nil
	}
	target, ok := reflect.New(t).Interface().(json.Unmarshaler)
	if !ok {
		return "", nil
	}
	if err := target.UnmarshalJSON(raw); err != nil {
		return path, err
	}
	return "", nil
}
