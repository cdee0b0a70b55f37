package source

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
)

func tarOf(entries ...tar.Header) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		body := strings.Repeat("x", int(h.Size))
		tw.WriteHeader(&h)
		tw.Write([]byte(body))
	}
	tw.Close()
	return buf.Bytes()
}

// FuzzScanner feeds arbitrary bytes to the tar scanner as a layer: it must
// never panic, never accept an entry that escapes the root, and never hold
// more of a .registry/ file than the limit.
func FuzzScanner(f *testing.F) {
	f.Add(tarOf(tar.Header{Name: "package.yaml", Size: 10, Mode: 0o644, Typeflag: tar.TypeReg}))
	f.Add(tarOf(tar.Header{Name: "../x", Size: 1, Typeflag: tar.TypeReg}))
	f.Add(tarOf(tar.Header{Name: "a", Typeflag: tar.TypeSymlink, Linkname: "../../b"}, tar.Header{Name: "package.yaml", Typeflag: tar.TypeReg}))
	f.Add(tarOf(tar.Header{Name: ".registry/app.yaml", Size: 5, Typeflag: tar.TypeReg}))
	f.Add([]byte("not a tar at all"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newScanner(newLimitReader(bytes.NewReader(data), 1<<20, "fuzz"), "layer")
		r, err := s.findStream()
		if err == nil {
			io.Copy(io.Discard, r)
			_ = s.finish()
		}
		for name, file := range s.legacy {
			if strings.HasPrefix(name, "/") || strings.Contains("/"+name+"/", "/../") || !strings.HasPrefix(name, LegacyRoot) {
				t.Fatalf("kept %q", name)
			}
			if len(file.Data) > maxLegacyFile {
				t.Fatalf("kept %d bytes of %q", len(file.Data), name)
			}
		}
	})
}
