package legacy

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// WriteYAML writes the Package record and then each CRD, in order, as one
// YAML stream with "---" between documents, the form unpack sent to the
// package manager. The output is deterministic: mapping keys are sorted, so
// the same Result always gives the same bytes. Nothing is written unless
// every object encodes.
func (r *Result) WriteYAML(w io.Writer) error {
	if r == nil || r.Package == nil {
		return errors.New("legacy: the result has no Package record to write")
	}
	var buf bytes.Buffer
	for i, o := range append([]*unstructured.Unstructured{r.Package}, r.CRDs...) {
		if o == nil {
			return fmt.Errorf("legacy: CRD %d of the result is nil", i)
		}
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("legacy: encoding %s %q: %w", o.GetKind(), o.GetName(), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
