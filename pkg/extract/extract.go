// Package extract writes a package's content: the package.yaml stream as
// it is (optionally gzipped, as Crossplane's package cache stores it), the
// objects filtered by kind, one file per object, or a JSON list.
package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Options select what is written.
type Options struct {
	// Only keeps the objects of these kinds (see MatchKind); empty keeps all.
	Only []string
	// JSON writes a kubectl-style List of the objects instead of YAML.
	JSON bool
	// Gzip compresses the YAML stream.
	Gzip bool
	// Limits bound the documents when the stream is parsed.
	Limits xpkg.Limits
}

// needsParse tells whether the stream can be copied as it is.
func (o Options) needsParse() bool { return len(o.Only) > 0 || o.JSON }

// Write writes the package stream r to w as the options say. Without a
// filter or JSON, the bytes are copied unparsed: at most one buffer is held.
func Write(w io.Writer, r io.Reader, o Options) error {
	out := w
	var zw *gzip.Writer
	if o.Gzip {
		zw, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
		out = zw
	}
	var err error
	switch {
	case o.JSON:
		err = writeJSON(out, r, o)
	case len(o.Only) > 0:
		err = writeFiltered(out, r, o)
	default:
		_, err = io.Copy(out, r)
	}
	if zw != nil {
		err = errors.Join(err, zw.Close())
	}
	return err
}

// eachObject decodes the stream and calls fn for every object the filter keeps.
func eachObject(r io.Reader, o Options, fn func(*xpkg.Object) error) error {
	d := xpkg.NewDecoder(r, o.Limits)
	for {
		obj, err := d.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(o.Only) > 0 && !MatchKind(o.Only, obj) {
			continue
		}
		if err := fn(obj); err != nil {
			return err
		}
	}
}

func writeFiltered(w io.Writer, r io.Reader, o Options) error {
	first := true
	return eachObject(r, o, func(obj *xpkg.Object) error {
		if !first {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		first = false
		_, err := w.Write(obj.Raw)
		return err
	})
}

func writeJSON(w io.Writer, r io.Reader, o Options) error {
	if _, err := io.WriteString(w, "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"List\",\n    \"items\": ["); err != nil {
		return err
	}
	n := 0
	err := eachObject(r, o, func(obj *xpkg.Object) error {
		b, err := json.MarshalIndent(obj.Content, "        ", "    ")
		if err != nil {
			return fmt.Errorf("%s: %w", obj, err)
		}
		sep := "\n        "
		if n > 0 {
			sep = ",\n        "
		}
		n++
		_, err = fmt.Fprintf(w, "%s%s", sep, b)
		return err
	})
	if err != nil {
		return err
	}
	end := "\n    ]\n}\n"
	if n == 0 {
		end = "]\n}\n"
	}
	_, err = io.WriteString(w, end)
	return err
}

// kindAliases are the short names --only accepts besides kinds themselves.
var kindAliases = map[string][]string{
	"crd":      {"CustomResourceDefinition"},
	"xrd":      {"CompositeResourceDefinition"},
	"mrd":      {"ManagedResourceDefinition"},
	"webhook":  {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"},
	"meta":     {xpkg.KindProvider, xpkg.KindConfiguration, xpkg.KindFunction},
	"function": {xpkg.KindFunction},
}

// MatchKind reports whether obj is of one of the kinds named: a kind
// (case-insensitive, singular or plural) or an alias (crd, xrd, mrd,
// webhook, meta). "meta" matches only the package's meta object.
func MatchKind(kinds []string, obj *xpkg.Object) bool {
	kind := obj.GVK().Kind
	for _, k := range kinds {
		k = strings.ToLower(k)
		if k == "meta" {
			if xpkg.IsMeta(obj) {
				return true
			}
			continue
		}
		for _, cand := range append(kindAliases[strings.TrimSuffix(k, "s")], kindAliases[k]...) {
			if cand == kind {
				return true
			}
		}
		if l := strings.ToLower(kind); k == l || k == l+"s" {
			return true
		}
	}
	return false
}
