package xpkg

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func docs(t *testing.T, stream string, limits Limits) ([]*Object, error) {
	t.Helper()
	d := NewDecoder(strings.NewReader(stream), limits)
	var out []*Object
	for {
		o, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
}

func TestDecoderSplitsLikeKubernetes(t *testing.T) {
	stream := "---\napiVersion: v1\nkind: A\nmetadata:\n  name: a\n--- # comment\n\n---\n# only a comment\n---   \nkind: B\nvalue: |\n  ---not a separator\n  --- indented, not one either\n---\nkind: C\n"
	objs, err := docs(t, stream, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GVK().Kind)
	}
	if strings.Join(kinds, ",") != "A,B,C" {
		t.Fatalf("kinds = %v", kinds)
	}
	if objs[1].Index != 1 || objs[1].Content["value"] != "---not a separator\n--- indented, not one either\n" {
		t.Errorf("document 1 = %#v", objs[1])
	}
	if string(objs[0].Raw) != "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n" || objs[0].String() != "document 0 (A a)" {
		t.Errorf("raw = %q, string = %q", objs[0].Raw, objs[0])
	}
}

func TestDecoderLongLines(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // longer than the read buffer
	stream := "kind: A\nv: " + long + "\n---\nkind: B\n"
	objs, err := docs(t, stream, DefaultLimits)
	if err != nil || len(objs) != 2 || objs[0].Content["v"] != long {
		t.Fatalf("err %v, %d objects", err, len(objs))
	}
	// A long line whose continuation starts with --- is no separator.
	stream = "kind: A\nv: " + strings.Repeat("y", 64<<10-len("v: ")) + "---\n"
	if objs, err = docs(t, stream, DefaultLimits); err != nil || len(objs) != 1 {
		t.Errorf("err %v, %d objects", err, len(objs))
	}
}

func TestDecoderErrors(t *testing.T) {
	cases := []struct {
		name, stream, want string
		limits             Limits
	}{
		{"invalid YAML", "kind: A\n---\nkind: [unclosed\n", "document 1: invalid YAML", DefaultLimits},
		{"scalar document", "just a string\n", "document 0: not a YAML mapping but a string", DefaultLimits},
		{"list document", "- a\n- b\n", "document 0: not a YAML mapping but a list", DefaultLimits},
		{"document too large", "kind: A\nv: " + strings.Repeat("z", 2000) + "\n", "document 0 is larger than 1024 bytes", Limits{MaxDocumentBytes: 1024}},
		{"too many documents", "a: 1\n---\nb: 2\n---\nc: 3\n", "more than 2 documents", Limits{MaxDocuments: 2}},
		{"non-UTF-8", "kind: \xff\xfe\n", "document 0: invalid YAML", DefaultLimits},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := docs(t, c.stream, c.limits)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestAliasBomb: a "billion laughs" document is refused by the YAML
// library's alias-expansion check instead of exhausting memory.
func TestAliasBomb(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	_, err := docs(t, b.String(), DefaultLimits)
	if err == nil || !strings.Contains(err.Error(), "aliases expand it to more than") {
		t.Fatalf("err = %v, want the alias-expansion refusal", err)
	}
}

// TestAliasAmplification: few aliases of a large scalar expand a small
// document far beyond its size; the bound is on the expansion.
func TestAliasAmplification(t *testing.T) {
	doc := "a: &a " + strings.Repeat("x", 64<<10) + "\nb: [" + strings.TrimSuffix(strings.Repeat("*a,", 32), ",") + "]\n"
	if _, err := docs(t, doc, DefaultLimits); err == nil || !strings.Contains(err.Error(), "aliases expand it") {
		t.Fatalf("err = %v", err)
	}
	small := "a: &a {x: 1}\nb: [*a, *a]\n"
	if _, err := docs(t, small, DefaultLimits); err != nil {
		t.Fatalf("a modest use of aliases: %v", err)
	}
}

// TestSlowPathBounds: YAML the fast decoder declines is read within a size
// bound, except JSON, which is read as JSON.
func TestSlowPathBounds(t *testing.T) {
	flow := "{items: [" + strings.TrimSuffix(strings.Repeat("{a: 1}, ", 200000), ", ") + "]}\n"
	if _, err := docs(t, flow, DefaultLimits); err == nil || !strings.Contains(err.Error(), "flow-style collections, which only the general YAML reader takes") {
		t.Fatalf("a %d-byte flow document: %v", len(flow), err)
	}
	json := `{"apiVersion": "v1", "kind": "List", "items": [` + strings.TrimSuffix(strings.Repeat(`{"a": 1}, `, 200000), ", ") + "]}\n"
	got, err := docs(t, json, DefaultLimits)
	if err != nil || len(got) != 1 || len(got[0].Content["items"].([]any)) != 200000 {
		t.Fatalf("a %d-byte JSON document: %v", len(json), err)
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n---\nkind: CustomResourceDefinition\n")
	f.Add("---\n--- #\n- a\n")
	f.Add("a: &x [*x]\n")
	f.Fuzz(func(t *testing.T, stream string) {
		d := NewDecoder(strings.NewReader(stream), Limits{MaxDocumentBytes: 1 << 16, MaxDocuments: 64})
		for i := 0; i < 100; i++ {
			o, err := d.Next()
			if err != nil {
				return
			}
			if o.Content == nil || len(o.Raw) == 0 {
				t.Fatalf("document %d decoded to nothing", o.Index)
			}
			_ = o.String()
			if IsMeta(o) {
				Validate(&Package{Meta: NewMeta(o), Objects: []*Object{o}})
			}
		}
	})
}

// TestSlowPathNamesTheCauseAndFollowsTheLimit: a document the fast
// decoder declines is read up to 1/SlowShare of --max-document-size, and
// the refusal names what made it decline: a tab or CRLF, not "flow style".
func TestSlowPathNamesTheCauseAndFollowsTheLimit(t *testing.T) {
	big := func(line string, n int) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n" + strings.Repeat(line, n)
	}
	tabDoc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k\t: v\n"
	for _, c := range []struct {
		name, doc string
		limit     int
		want      string // "" when it reads
	}{
		{"tabs over the bound", strings.Replace(big("  kkkkkkkk: vvvvvvvv\n", 60000), "data:\n", "data:\n\t\n", 1), 8 << 20, "tab characters"},
		{"CRLF over the bound", strings.ReplaceAll(big("  kkkkkkkk: vvvvvvvv\n", 60000), "\n", "\r\n"), 8 << 20, "CRLF line endings"},
		// 1.2 MB with CRLF: over the fixed 1 MiB of before, within 1/32 of 64Mi.
		{"CRLF within a raised --max-document-size", strings.ReplaceAll(big("  kkkkkkkk: vvvvvvvv\n", 60000), "\n", "\r\n"), 64 << 20, ""},
		{"a small document with a tab", tabDoc, DefaultLimits.MaxDocumentBytes, ""},
	} {
		limits := DefaultLimits
		limits.MaxDocumentBytes = c.limit
		_, err := docs(t, c.doc, limits)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (%d bytes): %v", c.name, len(c.doc), err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "YAML with "+c.want+", which only the general YAML reader takes")):
			t.Errorf("%s (%d bytes): %v", c.name, len(c.doc), err)
		}
	}
}
