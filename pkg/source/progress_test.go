package source

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestProgress(t *testing.T) {
	var out bytes.Buffer
	data := bytes.Repeat([]byte("x"), progressMin)
	r := withProgress(bytes.NewReader(data), &out, "Pulling sha256:abc", int64(len(data)))
	r.(*progressReader).tick = 0
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\r")
	if last := lines[len(lines)-1]; last != "Pulling sha256:abc: 100% (4.2 / 4.2 MB)" || !strings.HasSuffix(out.String(), "\n") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("progress output %q", out.String())
	}
	small := withProgress(bytes.NewReader([]byte("x")), &out, "small", 1)
	if _, ok := small.(*progressReader); ok {
		t.Error("a small download got a progress line")
	}
}
