package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

const stream = `apiVersion: meta.pkg.crossplane.io/v1
kind: Provider
metadata:
  name: p
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ../../etc/passwd
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: hook
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ../../etc/passwd
---
kind: "/"
`

func TestSplitNamesAreSafeAndUnique(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	d, err := CreateDir(out)
	if err != nil {
		t.Fatal(err)
	}
	names, err := Split(d, strings.NewReader(stream), Options{Limits: xpkg.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	want := []string{"crossplane.yaml", "customresourcedefinition_-etc-passwd.yaml", "validatingwebhookconfiguration_hook.yaml",
		"customresourcedefinition_-etc-passwd-2.yaml", "document-4.yaml"}
	if !slices.Equal(names, want) {
		t.Errorf("names = %q\nwant    %q", names, want)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != len(want) {
		t.Errorf("%d files written", len(entries))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "etc")); err == nil {
		t.Error("a name escaped the output directory")
	}
}

func TestOnlyAndMatchKind(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, strings.NewReader(stream), Options{Only: []string{"webhooks", "meta"}, Limits: xpkg.DefaultLimits}); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	if !strings.HasPrefix(got, "apiVersion: meta.pkg.crossplane.io/v1\n") || !strings.Contains(got, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration") || strings.Contains(got, "CustomResourceDefinition") {
		t.Errorf("--only webhooks,meta:\n%s", got)
	}
	buf.Reset()
	if err := Write(&buf, strings.NewReader(stream), Options{Only: []string{"CustomResourceDefinitions"}, JSON: true, Limits: xpkg.DefaultLimits}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), `"kind": "CustomResourceDefinition"`) != 2 {
		t.Errorf("-o json --only CustomResourceDefinitions:\n%s", buf.String())
	}
}

func TestAbortedOutputsLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateFile(filepath.Join(dir, "p.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	f.Abort()
	d, err := CreateDir(filepath.Join(dir, "split"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d.Path("x.yaml"), []byte("x"), 0o644)
	d.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
