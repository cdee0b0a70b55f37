package legacy

import (
	"fmt"
)

// parseRBAC reads the Extensions design's optional rbac.yaml, the
// permissions of the controller, into the record's spec.permissions, where
// the design's Extension record keeps them ({rules: [...]}). The design does
// not show the file, so the forms a Kubernetes author would write are
// accepted: a Role or ClusterRole, a bare {rules: [...]}, or a list of rules.
func parseRBAC(f *file) (map[string]any, error) {
	docs := nonEmpty(splitDocuments(f.data))
	switch len(docs) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fileErr(f.name, "holds %d YAML documents, want one", len(docs))
	}
	v, err := decodeValue(docs[0].data)
	if err != nil {
		return nil, fileErr(f.name, "%w", err)
	}
	rules, err := rbacRules(v)
	if err != nil {
		return nil, fileErr(f.name, "%w", err)
	}
	for i, r := range rules {
		if err := checkRule(r); err != nil {
			return nil, fileErr(f.name, "rules[%d]: %w", i, err)
		}
	}
	return map[string]any{"rules": rules}, nil
}

// rbacRules finds the list of rules in one of the accepted forms.
func rbacRules(v any) ([]any, error) {
	switch t := v.(type) {
	case []any:
		return t, nil
	case map[string]any:
		kind, _ := t["kind"].(string)
		if kind != "" && kind != "Role" && kind != "ClusterRole" {
			return nil, fmt.Errorf("kind %s is not a Role or ClusterRole", kind)
		}
		rules, ok := t["rules"].([]any)
		if !ok {
			return nil, fmt.Errorf("missing required field \"rules\" (a list of policy rules)")
		}
		return rules, nil
	}
	return nil, fmt.Errorf("want a list of policy rules or a mapping with rules, got %s", jsonType(v))
}

// checkRule checks the shape of one policy rule: lists of strings, and at
// least one verb, as Kubernetes requires.
func checkRule(r any) error {
	m, ok := r.(map[string]any)
	if !ok {
		return fmt.Errorf("want a mapping, got %s", jsonType(r))
	}
	for _, field := range []string{"apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"} {
		list, ok := m[field].([]any)
		if !ok && m[field] != nil {
			return fmt.Errorf("%s: want a list of strings", field)
		}
		for _, it := range list {
			if _, ok := it.(string); !ok {
				return fmt.Errorf("%s: want a list of strings, found %s", field, jsonType(it))
			}
		}
	}
	if verbs, _ := m["verbs"].([]any); len(verbs) == 0 {
		return fmt.Errorf("missing required field \"verbs\"")
	}
	return nil
}
