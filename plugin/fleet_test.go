package plugin

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/spf13/pflag"
)

// TestContextsFlag: --context keeps its single meaning for one name
// (given once or repeated) and names several clusters when repeated with
// other names or given as a glob; ConfigFlags sees the last value.
func TestContextsFlag(t *testing.T) {
	for _, c := range []struct {
		args    []string
		several bool
	}{
		{nil, false},
		{[]string{"--context", "prod"}, false},
		{[]string{"--context", "prod", "--context=prod"}, false},
		{[]string{"--context", "prod", "--context", "dev"}, true},
		{[]string{"--context", "prod-*"}, true},
		{[]string{"--context", "prod-[12]"}, true},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var last string
		fs.StringVar(&last, "context", "", "")
		cf := wrapContextFlag(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if cf.several() != c.several {
			t.Errorf("%v: several %v, want %v", c.args, cf.several(), c.several)
		}
		if len(c.args) > 0 && last != cf.names[len(cf.names)-1] {
			t.Errorf("%v: ConfigFlags sees %q", c.args, last)
		}
	}
}

// TestPrefixWriter: concurrent clusters' progress comes out in whole
// lines, each after its context.
func TestPrefixWriter(t *testing.T) {
	var buf bytes.Buffer
	out := &lockedWriter{w: &buf}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b"} {
		w := &prefixWriter{out: out, prefix: "context " + name + ": "}
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(w, "line %d ", i)
				fmt.Fprintln(w, "of "+name)
			}
		})
	}
	wg.Wait()
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 200 {
		t.Fatalf("%d lines, want 200", len(lines))
	}
	for _, l := range lines {
		var name, name2 string
		var i int
		if _, err := fmt.Sscanf(string(l), "context %1s: line %d of %s", &name, &i, &name2); err != nil || name != name2 {
			t.Errorf("torn line %q", l)
		}
	}
}
