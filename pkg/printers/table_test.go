package printers

import (
	"bytes"
	"testing"
)

func TestTableIsKubectlStyle(t *testing.T) {
	tbl := NewTable("NAME", "VERSION", "HEALTHY")
	tbl.Row("provider-nop", "v0.4.0", "True")
	tbl.Row("function-patch-and-transform", "v0.10.8", "")
	var buf bytes.Buffer
	if err := tbl.Render(&buf); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"NAME                           VERSION   HEALTHY\n" +
		"provider-nop                   v0.4.0    True\n" +
		"function-patch-and-transform   v0.10.8\n"
	if buf.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", buf.String(), want)
	}
}

func TestPrintObject(t *testing.T) {
	v := map[string]any{"b": 1, "a": []string{"x"}}
	var buf bytes.Buffer
	if err := PrintObject(&buf, FormatYAML, v); err != nil || buf.String() != "a:\n- x\nb: 1\n" {
		t.Errorf("yaml: %v %q", err, buf.String())
	}
	buf.Reset()
	if err := PrintObject(&buf, FormatJSON, v); err != nil || buf.String() != "{\n    \"a\": [\n        \"x\"\n    ],\n    \"b\": 1\n}\n" {
		t.Errorf("json: %v %q", err, buf.String())
	}
	if err := PrintObject(&buf, "xml", v); err == nil {
		t.Error("xml accepted")
	}
}
