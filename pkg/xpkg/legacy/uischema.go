package legacy

import (
	"strings"
)

// uiSchema is a *ui-schema.yaml file: UI metadata, kept as the author wrote
// it (comments included) because the annotation carries YAML text.
type uiSchema struct {
	f     *file
	scope scope
	text  string // its non-empty documents, joined by "---" lines
}

// uiSchemaPrefix splits "mytype.v1alpha1.ui-schema.yaml" into its prefix
// "mytype.v1alpha1"; "ui-schema.yaml" has the empty prefix.
func uiSchemaPrefix(base string) (string, bool) {
	if base == "ui-schema.yaml" {
		return "", true
	}
	prefix, ok := strings.CutSuffix(base, ".ui-schema.yaml")
	return prefix, ok && prefix != ""
}

// newUISchema reads a ui-schema file. Each document must be valid YAML, as
// tools parse the annotation; documents holding only comments are dropped
// so that concatenation yields no empty documents.
func newUISchema(f *file, warn *warnings) (*uiSchema, error) {
	prefix, ok := uiSchemaPrefix(f.base())
	sc, valid := newScope(f.dir(), prefix)
	if !ok || !valid {
		warn.add(f.name, "ui-schema name is not [kind[.version].]ui-schema.yaml; ignored")
		return nil, nil
	}
	var parts []string
	for _, d := range splitDocuments(f.data) {
		v, err := decodeValue(d.data)
		if err != nil {
			return nil, docErr(f.name, d.n, "%w", err)
		}
		if v != nil {
			parts = append(parts, strings.Trim(string(d.data), "\r\n"))
		}
	}
	if len(parts) == 0 {
		warn.add(f.name, "empty ui-schema; ignored")
		return nil, nil
	}
	return &uiSchema{f: f, scope: sc, text: strings.Join(parts, "\n---\n")}, nil
}

// concatUISchemas builds the ui-schema annotation: a pre-annotated value
// first, then each file, as one multi-document YAML ending in a newline (the
// form of the design's annotated-CRD example). It stops before building a
// value larger than an object's annotations may be.
func concatUISchemas(c *crd, existing string, list []*uiSchema) (string, error) {
	if len(list) == 0 {
		return existing, nil
	}
	parts := make([]string, 0, len(list)+1)
	size := 0
	if e := strings.Trim(existing, "\r\n"); e != "" {
		parts = append(parts, e)
		size += len(e)
	}
	for _, ui := range list {
		size += len(ui.text) + len("\n---\n")
		if size > maxAnnotationBytes {
			return "", c.err("%w", tooLarge("the ui-schema files for CustomResourceDefinition %q add up to more than the %d bytes Kubernetes allows for annotations", c.name, maxAnnotationBytes))
		}
		parts = append(parts, ui.text)
	}
	return strings.Join(parts, "\n---\n") + "\n", nil
}
