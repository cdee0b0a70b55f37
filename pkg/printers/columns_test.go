package printers

import (
	"strings"
	"testing"
)

func TestCustomColumns(t *testing.T) {
	c, err := ParseCustomColumns("NAME:.metadata.name,PACKAGE:{.spec.package},CONDITIONS:.status.conditions[*].type,MISSING:.spec.nothing")
	if err != nil {
		t.Fatal(err)
	}
	objs := []map[string]any{
		{"metadata": map[string]any{"name": "provider-nop"}, "spec": map[string]any{"package": "r.io/p:v1"},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Installed"}, map[string]any{"type": "Healthy"}}}},
		{"metadata": map[string]any{"name": "b"}},
	}
	var sb strings.Builder
	if err := c.Print(&sb, objs); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"NAME           PACKAGE     CONDITIONS        MISSING",
		"provider-nop   r.io/p:v1   Installed,Healthy   <none>",
	}
	got := strings.Split(sb.String(), "\n")
	if len(got) < 3 || !strings.HasPrefix(strings.TrimSpace(got[0]), "NAME") || !strings.Contains(got[1], "Installed,Healthy") ||
		!strings.Contains(got[1], "r.io/p:v1") || !strings.Contains(got[2], "b") || strings.Count(got[2], "<none>") != 3 {
		t.Errorf("custom columns:\n%s\nwant rows like:\n%s", sb.String(), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"", "NAME", "NAME:", ":.x", "N:{.a"} {
		if _, err := ParseCustomColumns(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
