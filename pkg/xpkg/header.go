package xpkg

import (
	"bytes"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Header is what identifies a document: its apiVersion, kind and
// metadata.name, read without parsing the rest.
type Header struct {
	APIVersion, Kind, Name string
}

// GVK is the header's apiVersion and kind.
func (h Header) GVK() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(h.APIVersion, h.Kind)
}

// IsMeta reports whether the header is a package meta object's.
func (h Header) IsMeta() bool {
	gvk := h.GVK()
	_, known := metaVersions[gvk.Kind]
	return IsMetaGroup(gvk.Group) && known
}

// ReadHeader reads a document's header from its block-style top level,
// as package builds write it, without decoding the rest: a line scan, a
// small fraction of a parse. It answers only where the answer is certain
// to be what DecodeDocument's object would say (GVK and Name); anything
// it is not sure of (quoting, flow style, anchors, tags, tabs, CRLF, a
// key written twice, a value YAML could read as no string) makes it
// decline, and the caller parses the document instead.
func ReadHeader(raw []byte) (Header, bool) {
	var h Header
	var seen [3]bool   // apiVersion, kind, metadata
	inMeta := false    // inside the block mapping of a top-level metadata:
	metaIndent := -1   // the indentation of metadata's keys, once known
	scalarIndent := -1 // the indentation of a header scalar just read
	openKey := false   // the last top-level key is another's, its value on the lines below
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if bytes.IndexByte(line, '\r') >= 0 || bytes.IndexByte(line, '\t') >= 0 {
			return h, false
		}
		trimmed := bytes.TrimLeft(line, " ")
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		indent := len(line) - len(trimmed)
		if scalarIndent >= 0 && indent > scalarIndent {
			return h, false // a plain scalar that goes on over lines
		}
		scalarIndent = -1
		if indent > 0 {
			if !inMeta {
				continue // inside some other top-level value
			}
			if metaIndent < 0 {
				metaIndent = indent
			}
			switch {
			case indent < metaIndent:
				return h, false // not a block mapping YAML would read alike
			case indent > metaIndent:
				continue // a nested value
			}
			key, value, ok := keyValue(trimmed)
			if !ok {
				return h, false
			}
			if key == "name" {
				if h.Name != "" || !plainString(value) {
					return h, false
				}
				h.Name, scalarIndent = string(value), indent
			}
			continue
		}
		if openKey && (trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' ')) {
			continue // a block sequence written at its key's indentation
		}
		inMeta = false
		key, value, ok := keyValue(trimmed)
		if !ok {
			return h, false
		}
		openKey = len(value) == 0 && key != "metadata" && key != "apiVersion" && key != "kind"
		switch key {
		case "apiVersion", "kind":
			i := 0
			if key == "kind" {
				i = 1
			}
			if seen[i] || !plainString(value) {
				return h, false
			}
			seen[i], scalarIndent = true, 0
			if i == 0 {
				h.APIVersion = string(value)
			} else {
				h.Kind = string(value)
			}
		case "metadata":
			if seen[2] || len(value) > 0 {
				return h, false // metadata written twice, or in flow style
			}
			seen[2], inMeta = true, true
		}
	}
	if !seen[0] || !seen[1] || !seen[2] || h.Name == "" {
		return h, false
	}
	return h, true
}

// keyValue splits a block mapping line, "key: value" or "key:", whose key
// is a plain word; the value is returned as written, comments declined.
func keyValue(line []byte) (string, []byte, bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return "", nil, false
	}
	key := line[:i]
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return "", nil, false
		}
	}
	rest := line[i+1:]
	if len(rest) > 0 && rest[0] != ' ' {
		return "", nil, false // "a:b" is a scalar, not a key
	}
	value := bytes.TrimRight(bytes.TrimLeft(rest, " "), " ")
	if bytes.IndexByte(value, '#') >= 0 {
		return "", nil, false
	}
	// Quoted, flow, block, anchored, aliased or tagged values may span
	// lines in ways a line scan cannot follow.
	if len(value) > 0 && strings.IndexByte("\"'{[|>&*!%@`", value[0]) >= 0 && string(value) != "{}" && string(value) != "[]" {
		return "", nil, false
	}
	return string(key), value, true
}

// plainString reports whether a plain scalar is certainly read as the
// string it spells: letters, digits and . / _ - only, starting with a
// letter, and no word YAML reads as a boolean or null.
func plainString(v []byte) bool {
	if len(v) == 0 || !(v[0] >= 'a' && v[0] <= 'z' || v[0] >= 'A' && v[0] <= 'Z') {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '/' || c == '_' || c == '-') {
			return false
		}
	}
	switch strings.ToLower(string(v)) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf":
		return false
	}
	return true
}
