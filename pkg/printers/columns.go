package printers

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// CustomColumns is kubectl's -o custom-columns=HEADER:JSONPATH,...: one
// column per pair, each cell the JSONPath's value for the object
// ("<none>" when it has none), in a kubectl-style table.
type CustomColumns struct {
	headers []string
	paths   []*jsonpath.JSONPath
	// NoHeaders leaves the header line out.
	NoHeaders bool
}

// ParseCustomColumns reads the spec after "custom-columns=". A path is
// written as kubectl takes it: ".metadata.name" or "{.metadata.name}".
func ParseCustomColumns(spec string) (*CustomColumns, error) {
	if spec == "" {
		return nil, fmt.Errorf("custom-columns format specified but no custom columns given: want HEADER:.path,...")
	}
	c := &CustomColumns{}
	for _, col := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(col, ":")
		if !ok || header == "" || path == "" {
			return nil, fmt.Errorf("custom-columns: %q is no HEADER:.path pair", col)
		}
		if !strings.HasPrefix(path, "{") {
			path = "{" + path + "}"
		}
		jp := jsonpath.New(header).AllowMissingKeys(true)
		if err := jp.Parse(path); err != nil {
			return nil, fmt.Errorf("custom-columns: column %s: %w", header, err)
		}
		c.headers = append(c.headers, header)
		c.paths = append(c.paths, jp)
	}
	return c, nil
}

// Print writes one row per object (its unstructured content).
func (c *CustomColumns) Print(w io.Writer, objects []map[string]any) error {
	t := NewTable(c.headers...)
	t.NoHeaders = c.NoHeaders
	for _, obj := range objects {
		row := make([]string, len(c.paths))
		for i, jp := range c.paths {
			results, err := jp.FindResults(obj)
			if err != nil {
				return fmt.Errorf("custom-columns: column %s: %w", c.headers[i], err)
			}
			var vals []string
			for _, r := range results {
				for _, v := range r {
					if v.IsValid() && !(v.Kind() == reflect.Interface && v.IsNil()) {
						vals = append(vals, fmt.Sprint(v.Interface()))
					}
				}
			}
			row[i] = "<none>"
			if len(vals) > 0 {
				row[i] = strings.Join(vals, ",")
			}
		}
		t.Row(row...)
	}
	return t.Render(w)
}
