package source

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// TestSpoolCopiesWhole: what a spool holds reads back whole, as a Reader
// and copied to a file, a pipe and a writer that is no file, from where
// reading left off; a source that fails fails the fill (a tar stream cut
// short is no end).
func TestSpoolCopiesWhole(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef"), 3*spoolChunk/16+5) // three chunks and a bit
	fill := func(t *testing.T) *spool {
		t.Helper()
		s, err := newSpool()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.fill(iotest.HalfReader(bytes.NewReader(want))); err != nil {
			t.Fatal(err)
		}
		if err := s.rewind(); err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("reader", func(t *testing.T) {
		got, err := io.ReadAll(struct{ io.Reader }{fill(t)})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("read %d bytes, %v; want %d", len(got), err, len(want))
		}
	})
	t.Run("file", func(t *testing.T) {
		s := fill(t)
		head := make([]byte, 10)
		if _, err := io.ReadFull(s, head); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n, err := io.Copy(f, s)
		if err != nil || n != int64(len(want)-10) {
			t.Fatalf("copied %d, %v; want %d", n, err, len(want)-10)
		}
		got, _ := os.ReadFile(f.Name())
		if !bytes.Equal(got, want[10:]) {
			t.Errorf("the file holds %d bytes, not the rest of the spool", len(got))
		}
	})
	t.Run("pipe", func(t *testing.T) {
		s := fill(t)
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		done := make(chan []byte)
		go func() {
			b, _ := io.ReadAll(pr)
			done <- b
		}()
		n, err := io.Copy(pw, s)
		pw.Close()
		if got := <-done; err != nil || n != int64(len(want)) || !bytes.Equal(got, want) {
			t.Errorf("copied %d, %v; the pipe read %d bytes, want %d", n, err, len(got), len(want))
		}
	})
	t.Run("closed pipe", func(t *testing.T) {
		s := fill(t)
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pr.Close()
		defer pw.Close()
		if _, err := io.Copy(pw, s); err == nil {
			t.Error("a copy to a pipe nobody reads succeeded")
		}
	})
	t.Run("buffer", func(t *testing.T) {
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, fill(t)); err != nil || !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("copied %d bytes, %v; want %d", buf.Len(), err, len(want))
		}
	})
	t.Run("failing source", func(t *testing.T) {
		s, err := newSpool()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		cut := io.MultiReader(bytes.NewReader(want[:100]), iotest.ErrReader(io.ErrUnexpectedEOF))
		if err := s.fill(cut); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("fill = %v, want the source's error", err)
		}
	})
}
