// Package fastyaml decodes the plain block-style YAML that controller-gen
// and similar tools write (the bulk of a Crossplane package stream) many
// times faster than sigs.k8s.io/yaml, and gives exactly the same value.
//
// # Subset
//
// Decode handles one document made of
//
//   - block mappings with plain, single- or double-quoted one-line keys,
//     including a sequence written at the key's own indentation
//     ("required:\n- a");
//   - block sequences, with mappings ("- key: value") and sequences
//     ("- - a") starting on an entry's line;
//   - plain scalars, also over several lines, resolved as go-yaml v2
//     resolves them;
//   - single- and double-quoted scalars, also over several lines;
//   - literal and folded block scalars with any chomping and indentation
//     indicator;
//   - the empty flow collections "[]" and "{}", and comments.
//
// Everything else makes Decode report ok == false: anchors, aliases, tags,
// flow collections with content, complex ("? ") and merge ("<<") keys,
// plain scalars starting with '?' or ':',
// directives and document markers, tabs, carriage returns, non-UTF-8 or
// non-printable input, duplicate keys, .inf and .nan (which JSON cannot
// hold), keys that are neither strings, integers nor booleans or longer
// than 1000 bytes, quoted continuation lines not indented deeper than
// their collection, comments not preceded by a space, nesting deeper than
// maxDepth, and any input that is malformed.
//
// # Fallback contract
//
// The result is what sigs.k8s.io/yaml.Unmarshal(doc, &v) with v of type any
// yields: it decodes with go-yaml v2 (YAML 1.1 resolution, so yes/no/on/off
// are booleans and 0755 is octal), then round-trips through encoding/json,
// so every number is a float64, mappings are map[string]any with non-string
// keys turned into strings, and sequences are []any. When Decode reports
// ok == false the caller must decode the document with sigs.k8s.io/yaml,
// which either succeeds with a value or reports the error; Decode never
// reports ok == true with a value sigs.k8s.io/yaml would not give.
//
// Strings that appear verbatim in the document share the memory of one
// copy of it, so any retained string keeps that copy alive.
package fastyaml

// maxDepth bounds nesting, far below go-yaml's and encoding/json's limits
// of 10000, so that deep input never decodes here but fails there.
const maxDepth = 1000

// Decode parses one YAML document (no "---" separators inside) written in
// the block-style subset described in the package comment, into the same
// value sigs.k8s.io/yaml.Unmarshal(doc, &v) (v of type any) would produce.
// ok == false means the document uses something outside the subset (or
// anything the decoder is not certain about): the caller then uses the
// general parser. Decode never returns ok == true with a value that differs
// from sigs.k8s.io/yaml's, and never panics.
func Decode(doc []byte) (v any, ok bool) {
	if !valid(doc) {
		return nil, false
	}
	d := &decoder{src: string(doc)}
	return d.document()
}
