package xpkg

import (
	"bytes"
	"encoding/json"
	"fmt"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// MaxSlowDocumentBytes bounds the documents the general YAML decoder
// parses: it holds several copies of a document's tree at once (YAML
// nodes, JSON, the result), about a hundred times the text of a
// flow-style document. Package builds write block-style YAML, which the
// fast decoder reads without this bound, and JSON documents are read as
// JSON.
const MaxSlowDocumentBytes = 1 << 20

// decodeSlowly reads a document the fast decoder declined: JSON as JSON,
// other YAML with sigs.k8s.io/yaml, within bounds on its size and on how
// far its aliases expand.
func decodeSlowly(raw []byte) (any, error) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		var v any
		err := json.Unmarshal(t, &v)
		return v, err
	}
	if len(raw) > MaxSlowDocumentBytes {
		return nil, fmt.Errorf("%d bytes of YAML written in flow style, with anchors or tags: the most read in that form is %d (package builds write block-style YAML)", len(raw), MaxSlowDocumentBytes)
	}
	if bytes.IndexByte(raw, '*') >= 0 {
		if err := checkAliases(raw); err != nil {
			return nil, err
		}
	}
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	return v, nil
}

// checkAliases refuses a document whose aliases expand it past
// MaxSlowDocumentBytes (a "billion laughs"), measuring the expansion on
// the unexpanded node tree.
func checkAliases(raw []byte) error {
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
			if s > MaxSlowDocumentBytes {
				break
			}
		}
		sizes[n] = s
		return s
	}
	if s := size(&n, 0); s > MaxSlowDocumentBytes {
		return fmt.Errorf("its aliases expand it to more than %d bytes", MaxSlowDocumentBytes)
	}
	return nil
}
