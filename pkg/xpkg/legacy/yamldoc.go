package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// document is one YAML document of a file.
type document struct {
	n    int // 1-based position in the file
	data []byte
}

// splitDocuments splits a YAML stream at its "---" lines. A marker line may
// carry a comment or content after the marker; content stays with the
// document it starts. Empty documents keep their number, so messages count
// documents the way an author reading the file does.
func splitDocuments(b []byte) []document {
	var docs []document
	var cur []byte
	n := 1
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i+1], b[i+1:]
		} else {
			b = nil
		}
		if rest, ok := cutMarker(line); ok {
			if n > 1 || len(bytes.TrimSpace(cur)) > 0 {
				docs = append(docs, document{n: n, data: cur})
				n++
			}
			cur = rest
			continue
		}
		cur = append(cur, line...)
	}
	return append(docs, document{n: n, data: cur})
}

// cutMarker reports whether line is a "---" document marker and returns
// what follows the marker unless it is only a comment.
func cutMarker(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok || (len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n' && rest[0] != '\r') {
		return nil, false
	}
	trimmed := bytes.TrimSpace(rest)
	if len(trimmed) == 0 || trimmed[0] == '#' {
		return nil, true
	}
	return append([]byte(nil), bytes.TrimLeft(rest, " \t")...), true
}

// decodeValue decodes one YAML document into JSON-compatible Go values with
// integers kept as int64, as unstructured objects need. An empty document
// (nothing but comments or whitespace) decodes to nil.
func decodeValue(data []byte) (any, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	var v any
	if err := utiljson.Unmarshal(j, &v); err != nil {
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	return v, nil
}

// decodeMap decodes a document that must be a YAML mapping, or empty.
func decodeMap(data []byte) (map[string]any, error) {
	v, err := decodeValue(data)
	if err != nil || v == nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a YAML mapping, got %s", jsonType(v))
	}
	return m, nil
}

// decodeStruct decodes a mapping document into the struct v, turning type
// errors into messages that name the field. It returns the top-level keys
// known does not accept, for the caller to warn about, in sorted order.
func decodeStruct(data []byte, v any, known func(string) bool) ([]string, error) {
	m, err := decodeMap(data)
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("field %q: want a %s, got a %s", te.Field, yamlWord(te.Type.Kind().String()), yamlWord(te.Value))
		}
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	var unknown []string
	for k := range m {
		if !known(k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return unknown, nil
}

// jsonType names the YAML type of a decoded value for messages.
func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case int64, float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// yamlWord turns a Go kind or JSON type name into the YAML word for it.
func yamlWord(kind string) string {
	switch kind {
	case "slice", "array":
		return "list"
	case "struct", "map", "object":
		return "mapping"
	case "bool":
		return "boolean"
	case "int", "int64", "float64", "number":
		return "number"
	}
	return kind
}

// stringMap reads a map of strings such as metadata.labels, which must hold
// only string values to be valid Kubernetes metadata.
func stringMap(v any, field string) (map[string]string, error) {
	if v == nil {
		return map[string]string{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a mapping of strings, got %s", field, jsonType(v))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key reported is always the same one
	out := make(map[string]string, len(m))
	for _, k := range keys {
		val := m[k]
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("%s: value of %q is %s, want a string (quote it)", field, k, jsonType(val))
		}
		out[k] = s
	}
	return out, nil
}
