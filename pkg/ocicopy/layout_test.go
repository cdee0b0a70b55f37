package ocicopy_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
)

// TestRoundTripThroughLayout: registry → layout → registry keeps every
// digest and byte, the layout entry is named, and a second copy into the
// layout is skipped.
func TestRoundTripThroughLayout(t *testing.T) {
	src, dst := newServer(t), newServer(t)
	idx := multiPlatform(t)
	want, _ := idx.Digest()
	from := src.push(t, "src/provider:v1", idx)
	dir := filepath.Join(t.TempDir(), "layout")
	l, err := ocicopy.OpenLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &ocicopy.Copier{}
	res, err := c.ToLayout(background(), regSource(from), l, "src/provider:v1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Image.Digest != want || res.BlobsSent != 3 || res.Image.Manifests != 3 {
		t.Errorf("into the layout: %+v", res)
	}
	entries, err := ocicopy.ReadLayout(dir)
	if err != nil || len(entries) != 1 || entries[0].RefName != "src/provider:v1" || entries[0].Digest != want || !entries[0].MediaType.IsIndex() {
		t.Fatalf("entries %+v, %v", entries, err)
	}
	layoutBlobsSound(t, dir)

	if again, err := c.ToLayout(background(), regSource(from), l, "src/provider:v1"); err != nil || !again.Skipped {
		t.Errorf("second copy into the layout: %+v, %v", again, err)
	}

	to := dst.ref(t, "mirror/provider:v1")
	back, err := c.ToRegistry(background(), ocicopy.Source{LayoutDir: dir, Digest: entries[0].Digest}, to, opts())
	if err != nil {
		t.Fatal(err)
	}
	if headDigest(t, to) != want.String() || back.BlobsSent != 3 || !bytes.Equal(rawManifest(t, to), rawManifest(t, from)) {
		t.Errorf("back in a registry: %+v", back)
	}
	for _, ch := range children(t, rawManifest(t, to)) {
		if !bytes.Equal(rawManifest(t, to.Context().Digest(ch.Digest.String())), rawManifest(t, from.Context().Digest(ch.Digest.String()))) {
			t.Errorf("the manifest %s changed", ch.Digest)
		}
	}
}

// TestLayoutEntries: an image already in the layout under another name
// costs no blob; a ref name put again is replaced, and the others kept.
func TestLayoutEntries(t *testing.T) {
	src := newServer(t)
	a := src.push(t, "src/a:v1", multiPlatform(t))
	img, err := random.Image(512, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := src.push(t, "src/b:v1", img)
	bDigest, _ := img.Digest()
	l, err := ocicopy.OpenLayout(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &ocicopy.Copier{}
	for _, name := range []string{"a", "a-again"} {
		if _, err := c.ToLayout(background(), regSource(a), l, name); err != nil {
			t.Fatal(err)
		}
	}
	src.reset()
	res, err := c.ToLayout(background(), regSource(a), l, "a-third")
	if err != nil || res.Skipped || res.BlobsSent != 0 || res.BlobsPresent != 3 || src.count("GET /v2/src/a/blobs/") != 0 {
		t.Errorf("a third name: %+v, %v, requests %q", res, err, src.requests())
	}
	if _, err := c.ToLayout(background(), regSource(b), l, "a-again"); err != nil {
		t.Fatal(err)
	}
	entries, err := ocicopy.ReadLayout(l.Dir())
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(entries[0].RefName, entries[1].RefName, entries[2].RefName)
	if len(entries) != 3 || got != "aa-againa-third" || entries[1].Digest != bDigest || entries[0].Digest == bDigest {
		t.Errorf("entries %+v", entries)
	}
}

// TestLayoutConcurrentCopies: copies into one Layout at once each get
// their entry, and index.json stays whole.
func TestLayoutConcurrentCopies(t *testing.T) {
	src := newServer(t)
	var refs []v1.Hash
	for i := range 6 {
		img, err := random.Image(256, 2)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		refs = append(refs, d)
		src.push(t, fmt.Sprintf("src/img%d:v1", i), img)
	}
	l, err := ocicopy.OpenLayout(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &ocicopy.Copier{}
	var wg sync.WaitGroup
	errs := make([]error, len(refs))
	for i := range refs {
		wg.Go(func() {
			_, errs[i] = c.ToLayout(background(), regSource(src.ref(t, fmt.Sprintf("src/img%d:v1", i))), l, fmt.Sprint("img", i))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	entries, err := ocicopy.ReadLayout(l.Dir())
	if err != nil || len(entries) != len(refs) {
		t.Fatalf("entries %+v, %v", entries, err)
	}
	for _, e := range entries {
		var i int
		if _, err := fmt.Sscanf(e.RefName, "img%d", &i); err != nil || e.Digest != refs[i] {
			t.Errorf("entry %+v", e)
		}
	}
	layoutBlobsSound(t, l.Dir())
}

// TestOpenLayoutRefusesOtherDirectories: a directory holding something
// else is no layout to write into; an empty one becomes one.
func TestOpenLayoutRefusesOtherDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ocicopy.OpenLayout(dir); err == nil || !strings.Contains(err.Error(), "neither an OCI image layout nor empty") {
		t.Errorf("error %v", err)
	}
	empty := t.TempDir()
	if _, err := ocicopy.OpenLayout(empty); err != nil {
		t.Fatal(err)
	}
	if entries, err := ocicopy.ReadLayout(empty); err != nil || len(entries) != 0 {
		t.Errorf("a new layout: %v, %v", entries, err)
	}
	// A crashed copy's temporary file is cleared when the layout is
	// opened again.
	stale := filepath.Join(empty, "blobs", "sha256", ".0123.tmp-42")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ocicopy.OpenLayout(empty); err != nil {
		t.Errorf("reopening a layout: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a stale temporary file is left: %v", err)
	}
}
