package xpkg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// SlowShare is the share of --max-document-size up to which a document
// the fast decoder declines is read with the general YAML decoder, which
// holds several copies of a document's tree at once (YAML nodes, JSON,
// the result): about a hundred times the text of a flow-style document.
// At the default 32Mi that is 1Mi. Package builds write block-style YAML,
// which the fast decoder reads up to the whole --max-document-size, and
// JSON documents are read as JSON.
const SlowShare = 32

// slowLimit is the bound for documents the general decoder reads.
func slowLimit(maxDocument int) int {
	if maxDocument <= 0 {
		maxDocument = DefaultLimits.MaxDocumentBytes
	}
	return max(maxDocument/SlowShare, 64<<10)
}

// decodeSlowly reads a document the fast decoder declined: JSON as JSON,
// other YAML with sigs.k8s.io/yaml, within bounds on its size and on how
// far its aliases expand.
func decodeSlowly(raw []byte, maxDocument int) (any, error) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		var v any
		err := json.Unmarshal(t, &v)
		return v, err
	}
	limit := slowLimit(maxDocument)
	if len(raw) > limit {
		return nil, fmt.Errorf("%d bytes of YAML with %s, which only the general YAML reader takes, and it reads at most 1/%d of --max-document-size (%d bytes; package builds write plain block-style YAML)",
			len(raw), declined(raw), SlowShare, limit)
	}
	if bytes.IndexByte(raw, '*') >= 0 {
		if err := checkAliases(raw, limit); err != nil {
			return nil, err
		}
	}
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	return v, nil
}

// declined names what in a document the fast decoder does not take: tab
// characters, CRLF line endings, flow-style collections, anchors or
// aliases, tags; or, when none of these shows, "constructs beyond plain
// block style".
func declined(raw []byte) string {
	var found []string
	if bytes.IndexByte(raw, '\t') >= 0 {
		found = append(found, "tab characters")
	}
	if bytes.Contains(raw, []byte("\r\n")) {
		found = append(found, "CRLF line endings")
	}
	var flow, anchors, tags bool
	for line := range bytes.Lines(raw) {
		v := bytes.TrimLeft(line, " -")
		if i := bytes.Index(v, []byte(": ")); i >= 0 {
			v = v[i+2:]
		}
		v = bytes.TrimLeft(v, " ")
		if len(v) == 0 {
			continue
		}
		switch v[0] {
		case '{', '[':
			flow = true
		case '&', '*':
			anchors = true
		case '!':
			tags = true
		}
	}
	if flow {
		found = append(found, "flow-style collections")
	}
	if anchors {
		found = append(found, "anchors or aliases")
	}
	if tags {
		found = append(found, "tags")
	}
	if len(found) == 0 {
		return "constructs beyond plain block style"
	}
	return strings.Join(found, ", ")
}

// checkAliases refuses a document whose aliases expand it past limit (a
// "billion laughs"), measuring the expansion on the unexpanded node tree.
func checkAliases(raw []byte, limit int) error {
	var n yaml3.Node
	if err := yaml3.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("invalid YAML: %w", err)
	}
	sizes := map[*yaml3.Node]int{}
	var size func(*yaml3.Node, int) int
	size = func(n *yaml3.Node, depth int) int {
		if n == nil || depth > 10000 {
			return 0
		}
		if s, ok := sizes[n]; ok {
			return s
		}
		s := len(n.Value) + 1
		if n.Kind == yaml3.AliasNode {
			s = size(n.Alias, depth+1)
		}
		for _, c := range n.Content {
			s += size(c, depth+1)
			if s > limit {
				break
			}
		}
		sizes[n] = s
		return s
	}
	if s := size(&n, 0); s > limit {
		return fmt.Errorf("its aliases expand it to more than %d bytes", limit)
	}
	return nil
}
