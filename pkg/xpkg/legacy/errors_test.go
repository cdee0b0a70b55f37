package legacy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// errorCase is a broken package and the error it must fail with.
type errorCase struct {
	name  string
	files map[string]string
	opts  Options
	want  string // the whole message, or its start when it ends in "..."
}

// TestErrors checks that broken packages fail with one line naming the file
// (and document) at fault.
func TestErrors(t *testing.T) {
	for _, tc := range append(fileErrorCases(), optionErrorCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Translate(regTree(tc.files), tc.opts)
			checkError(t, err, tc.want)
		})
	}
}

func fileErrorCases() []errorCase {
	crd := crdYAML("example.org", "Widget", "widgets", "v1")
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
	return []errorCase{
		{"missing app.yaml", map[string]string{"install.yaml": installWith("x")}, Options{},
			".registry/app.yaml: not found; a legacy package must have one"},
		{"missing version", map[string]string{"app.yaml": "title: T\n"}, Options{},
			`.registry/app.yaml: missing required field "version"`},
		{"missing version, untagged image", map[string]string{"app.yaml": "title: T\n"}, Options{Image: "a/b"},
			`.registry/app.yaml: missing required field "version" (and image "a/b" has no tag to take it from)`},
		{"malformed app.yaml", map[string]string{"app.yaml": "title: [unclosed\n"}, Options{},
			".registry/app.yaml: malformed YAML: ..."},
		{"app.yaml not a mapping", map[string]string{"app.yaml": "- a\n- b\n"}, Options{},
			".registry/app.yaml: want a YAML mapping, got a list"},
		{"app.yaml field type", map[string]string{"app.yaml": "version: 1.0.0\nkeywords: databases\n"}, Options{},
			`.registry/app.yaml: field "keywords": want a list, got a string`},
		{"empty app.yaml", map[string]string{"app.yaml": "# nothing\n"}, Options{},
			".registry/app.yaml: is empty; it must hold the package metadata"},
		{"bad permissionScope", map[string]string{"app.yaml": minimalApp + "permissionScope: Global\n"}, Options{},
			`.registry/app.yaml: field "permissionScope": "Global" is not one of Cluster, Namespaced`},
		{"dependsOn without crd", map[string]string{"app.yaml": minimalApp + "dependsOn:\n- {}\n"}, Options{},
			`.registry/app.yaml: field "dependsOn[0]": missing "crd"`},
		{"malformed CRD file", map[string]string{"app.yaml": minimalApp, "resources/a/x.crd.yaml": crd + "---\nspec: {a: b\n"}, Options{},
			".registry/resources/a/x.crd.yaml: document 2: malformed YAML: ..."},
		{"non-CRD document", map[string]string{"app.yaml": minimalApp, "resources/a/foo.crd.yaml": crd + "---\n" + deployment}, Options{},
			".registry/resources/a/foo.crd.yaml: document 2: not a CustomResourceDefinition (kind Deployment)"},
		{"CRD name not plural.group", map[string]string{"app.yaml": minimalApp,
			"resources/crd.yaml": strings.Replace(crd, "name: widgets.example.org", "name: widget", 1)}, Options{},
			`.registry/resources/crd.yaml: document 1: CustomResourceDefinition name "widget" must be <spec.names.plural>.<spec.group>, here "widgets.example.org"`},
		{"CRD without version", map[string]string{"app.yaml": minimalApp,
			"resources/crd.yaml": strings.Replace(crd, "  version: v1\n", "", 1)}, Options{},
			".registry/resources/crd.yaml: document 1: CustomResourceDefinition has no version: set spec.version or spec.versions"},
		{"CRD label not a string", map[string]string{"app.yaml": minimalApp,
			"resources/crd.yaml": strings.Replace(crd, "metadata:\n", "metadata:\n  labels:\n    controller-tools.k8s.io: 1.0\n", 1)}, Options{},
			`.registry/resources/crd.yaml: document 1: metadata.labels: value of "controller-tools.k8s.io" is a number, want a string (quote it)`},
		{"same group, kind and version twice", map[string]string{"app.yaml": minimalApp,
			"resources/a/crd.yaml": crd, "resources/b/crd.yaml": crd}, Options{},
			".registry/resources/b/crd.yaml: document 1: example.org/v1, Kind=Widget is also defined in .registry/resources/a/crd.yaml document 1"},
		{"malformed ui-schema", map[string]string{"app.yaml": minimalApp, "resources/crd.yaml": crd,
			"resources/widget.ui-schema.yaml": "a: 1\n---\nb: [\n"}, Options{},
			".registry/resources/widget.ui-schema.yaml: document 2: malformed YAML: ..."},
		{"malformed group.yaml", map[string]string{"app.yaml": minimalApp, "resources/group.yaml": "title: {\n"}, Options{},
			".registry/resources/group.yaml: malformed YAML: ..."},
		{"install.yaml not a Deployment", map[string]string{"app.yaml": minimalApp,
			"install.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"}, Options{},
			".registry/install.yaml: not a Deployment (kind Job); install.yaml must describe a single Deployment"},
		{"install.yaml without containers", map[string]string{"app.yaml": minimalApp, "install.yaml": deployment + "spec:\n  template:\n    spec: {}\n"}, Options{},
			".registry/install.yaml: spec.template.spec.containers: want a non-empty list"},
		{"install.yaml with two documents", map[string]string{"app.yaml": minimalApp, "install.yaml": installWith("x") + "---\n" + installWith("y")}, Options{},
			".registry/install.yaml: holds 2 YAML documents; want a single Deployment"},
		{"rbac.yaml rule without verbs", map[string]string{"app.yaml": minimalApp, "rbac.yaml": "rules:\n- resources: [secrets]\n"}, Options{},
			`.registry/rbac.yaml: rules[0]: missing required field "verbs"`},
	}
}

func optionErrorCases() []errorCase {
	return []errorCase{
		{"no tree", map[string]string{}, Options{Root: "pkg"},
			"pkg: not found: no legacy package tree here"},
		{"root outside the file system", map[string]string{"app.yaml": minimalApp}, Options{Root: "../etc"},
			`Options.Root "../etc": not a valid path within the file system`},
		{"source is a URL", map[string]string{"app.yaml": minimalApp}, Options{Source: "https://registry.example.com"},
			`Options.Source "https://registry.example.com": want a registry host such as registry.example.com, not a URL`},
		{"bad pull policy", map[string]string{"app.yaml": minimalApp}, Options{ImagePullPolicy: "Sometimes"},
			`Options.ImagePullPolicy "Sometimes": want Always, IfNotPresent or Never`},
	}
}

// checkError matches a whole message, or a prefix when want ends in "...",
// and insists on a single line.
func checkError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	if prefix, ok := strings.CutSuffix(want, "..."); ok {
		if !strings.HasPrefix(msg, prefix) {
			t.Errorf("error = %q, want it to start %q", msg, prefix)
		}
	} else if msg != want {
		t.Errorf("error = %q\n       want %q", msg, want)
	}
}

// TestOversizedFile refuses a file over MaxFileSize before parsing it.
func TestOversizedFile(t *testing.T) {
	big := make([]byte, MaxFileSize+1)
	for _, name := range []string{"app.yaml", "resources/huge.crd.yaml", "icon.svg"} {
		fsys := regTree(map[string]string{"app.yaml": minimalApp})
		fsys[".registry/"+name] = &fstest.MapFile{Data: big}
		_, err := Translate(fsys, Options{})
		checkError(t, err, ".registry/"+name+": file is 16777217 bytes, over the 16777216-byte (16 MiB) limit")
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: error %v does not match ErrTooLarge", name, err)
		}
	}
	// Files that play no role are never read, whatever their size.
	fsys := regTree(map[string]string{"app.yaml": minimalApp})
	fsys[".registry/README.md"] = &fstest.MapFile{Data: big}
	mustTranslate(t, fsys, Options{})
}

// TestTotalSize refuses a tree whose files add up past MaxTotalSize.
func TestTotalSize(t *testing.T) {
	fsys := regTree(map[string]string{"app.yaml": minimalApp})
	chunk := make([]byte, MaxFileSize)
	for i := range MaxTotalSize/MaxFileSize + 1 {
		fsys[".registry/resources/"+string(rune('a'+i))+".icon.png"] = &fstest.MapFile{Data: chunk}
	}
	_, err := Translate(fsys, Options{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "add up to more than 67108864 bytes") {
		t.Errorf("error = %v, want the total size limit", err)
	}
}

// TestAnnotationLimit refuses a CRD whose annotations Kubernetes would
// refuse, here because of a large icon.
func TestAnnotationLimit(t *testing.T) {
	_, err := Translate(regTree(map[string]string{
		"app.yaml":           minimalApp,
		"icon.svg":           "<svg>" + strings.Repeat(" ", 200<<10) + "</svg>",
		"resources/crd.yaml": crdYAML("example.org", "Widget", "widgets", "v1"),
	}), Options{})
	if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), ".registry/resources/crd.yaml: document 1: CustomResourceDefinition \"widgets.example.org\" would carry") {
		t.Errorf("error = %v, want the annotation size limit", err)
	}
}

// TestSymlinksNotFollowed never reads through a symbolic link.
func TestSymlinksNotFollowed(t *testing.T) {
	secret := "apiVersion: apiextensions.k8s.io/v1\nkind: Secret-outside-the-tree\n"
	fsys := regTree(map[string]string{"app.yaml": minimalApp})
	fsys["outside.yaml"] = &fstest.MapFile{Data: []byte(secret)}
	fsys[".registry/resources/link.crd.yaml"] = &fstest.MapFile{Data: []byte("../../outside.yaml"), Mode: fs.ModeSymlink}
	res := mustTranslate(t, fsys, Options{})
	if len(res.CRDs) != 0 || !hasWarning(res, ".registry/resources/link.crd.yaml", "not a regular file") {
		t.Errorf("CRDs %d, warnings %q: the link should be skipped and reported", len(res.CRDs), res.Warnings)
	}

	fsys = fstest.MapFS{
		".registry/app.yaml": {Data: []byte("../outside.yaml"), Mode: fs.ModeSymlink},
		"outside.yaml":       {Data: []byte(minimalApp)},
	}
	_, err := Translate(fsys, Options{})
	checkError(t, err, ".registry/app.yaml: not a regular file; links are not followed")

	fsys = fstest.MapFS{
		"pkg":              {Data: []byte("real"), Mode: fs.ModeSymlink},
		"real/app.yaml":    {Data: []byte(minimalApp)},
		".registry/x.yaml": {Data: []byte("x")},
	}
	_, err = Translate(fsys, Options{Root: "pkg"})
	checkError(t, err, "pkg: is a symbolic link; links are not followed")
}

// TestMissingInstallAllowed translates a package without install.yaml: the
// design makes it optional, the record then has no controller.
func TestMissingInstallAllowed(t *testing.T) {
	res := mustTranslate(t, regTree(map[string]string{
		"app.yaml":           minimalApp,
		"resources/crd.yaml": crdYAML("example.org", "Widget", "widgets", "v1"),
	}), Options{Name: "widgets", ImagePullPolicy: "Always"})
	spec := res.Package.Object["spec"].(map[string]any)
	if _, found := spec["controller"]; found {
		t.Error("controller set without install.yaml")
	}
	if res.Package.GetName() != "widgets" || len(res.CRDs) != 1 {
		t.Errorf("name %q, %d CRDs", res.Package.GetName(), len(res.CRDs))
	}
	if !hasWarning(res, "Options.ImagePullPolicy is unused") {
		t.Errorf("warnings = %q", res.Warnings)
	}
}

// TestTooManyCRDs stops reading CRDs past MaxCRDs.
func TestTooManyCRDs(t *testing.T) {
	var b strings.Builder
	for i := range MaxCRDs + 1 {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(crdYAML("example.org", "Widget", fmt.Sprintf("widgets%d", i), "v1"))
	}
	_, err := Translate(regTree(map[string]string{"app.yaml": minimalApp, "resources/many.crd.yaml": b.String()}), Options{})
	checkError(t, err, ".registry/resources/many.crd.yaml: document 1001: the package holds more than 1000 CustomResourceDefinitions")
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("error %v does not match ErrTooLarge", err)
	}
}

// TestSymlinksOnDisk checks the same through os.DirFS, which would follow
// a link out of the directory if asked to open it.
func TestSymlinksOnDisk(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.crd.yaml")
	mustWrite(t, outside, crdYAML("example.org", "Secret", "secrets", "v1"))
	mustWrite(t, filepath.Join(dir, ".registry", "app.yaml"), minimalApp)
	if err := os.Symlink(outside, filepath.Join(dir, ".registry", "link.crd.yaml")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	res := mustTranslateFS(t, os.DirFS(dir))
	if len(res.CRDs) != 0 || !hasWarning(res, ".registry/link.crd.yaml", "not a regular file") {
		t.Errorf("CRDs %d, warnings %q: the link should be skipped and reported", len(res.CRDs), res.Warnings)
	}
}

func mustWrite(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustTranslateFS(t *testing.T, fsys fs.FS) *Result {
	t.Helper()
	res, err := Translate(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
