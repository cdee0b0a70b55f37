package source_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// TestVerifyingReader: a stream read to its end is the content its digest
// and size name, or its end is an error.
func TestVerifyingReader(t *testing.T) {
	body := "the blob"
	want := v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256([]byte(body)))}
	for _, tc := range []struct {
		name, content string
		size          int64
		err           string
	}{
		{"whole", body, int64(len(body)), ""},
		{"any size", body, 0, ""},
		{"other content", "the blub", int64(len(body)), "is corrupt"},
		{"longer", body + "!", int64(len(body)), "larger than the 8 bytes"},
		{"shorter", body[:4], int64(len(body)), "is corrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := source.VerifyingReader(strings.NewReader(tc.content), want, tc.size, "the blob x")
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, r)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
