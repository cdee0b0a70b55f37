package legacy

import (
	"encoding/base64"
	"path"
	"strings"
	"testing"
)

// iconFile is an icon file with the leading bytes of its format.
func iconFile(ext string) string {
	switch ext {
	case "svg":
		return `<svg xmlns="http://www.w3.org/2000/svg"/>` + "\n"
	case "png":
		return "\x89PNG\r\n\x1a\n-png"
	case "jpg", "jpeg":
		return "\xff\xd8\xff\xe0-" + ext
	}
	return "GIF89a-gif"
}

func dataURI(media, data string) string {
	return "data:" + media + ";base64," + base64.StdEncoding.EncodeToString([]byte(data))
}

// TestIconPreference removes the preferred icon one at a time: with several
// icons in one directory the design prefers svg, then png, jpg, gif.
func TestIconPreference(t *testing.T) {
	files := map[string]string{
		"app.yaml":           minimalApp,
		"resources/crd.yaml": crdYAML("example.org", "Widget", "widgets", "v1"),
	}
	for _, ext := range []string{"gif", "jpg", "png", "svg"} {
		files["icon."+ext] = iconFile(ext)
	}
	order := []struct{ ext, media string }{
		{"svg", "image/svg+xml"}, {"png", "image/png"}, {"jpg", "image/jpeg"}, {"gif", "image/gif"},
	}
	for _, want := range order {
		res := mustTranslate(t, regTree(files), Options{})
		icons := field(t, res.Package.Object, "spec", "icons").([]any)
		got := icons[0].(map[string]any)
		if len(icons) != 1 || got["mediatype"] != want.media || got["base64data"] != base64.StdEncoding.EncodeToString([]byte(iconFile(want.ext))) {
			t.Errorf("with icons up to %s: spec.icons = %v, want only icon.%s", want.ext, icons, want.ext)
		}
		if uri := res.CRDs[0].GetAnnotations()[AnnotationIconDataURI]; uri != dataURI(want.media, iconFile(want.ext)) {
			t.Errorf("with icons up to %s: CRD icon = %.40q, want icon.%s", want.ext, uri, want.ext)
		}
		delete(files, "icon."+want.ext)
	}
	files["icon.jpeg"] = iconFile("jpeg")
	files["icon.gif"] = iconFile("gif")
	res := mustTranslate(t, regTree(files), Options{})
	if uri := res.CRDs[0].GetAnnotations()[AnnotationIconDataURI]; uri != dataURI("image/jpeg", iconFile("jpeg")) {
		t.Errorf("icon.jpeg should rank as jpg, over gif; got %.40q", uri)
	}
}

// TestIconUnsupported reports an icon of an unknown format and uses none.
func TestIconUnsupported(t *testing.T) {
	res := mustTranslate(t, regTree(map[string]string{
		"app.yaml":           minimalApp,
		"icon.bmp":           "BM",
		"resources/icon.png": "not a png",
		"resources/crd.yaml": crdYAML("example.org", "Widget", "widgets", "v1"),
	}), Options{})
	if !hasWarning(res, ".registry/icon.bmp", `icon format "bmp" is not one of svg, png, jpg, gif`) {
		t.Errorf("warnings = %q, want one for icon.bmp", res.Warnings)
	}
	if !hasWarning(res, ".registry/resources/icon.png", "does not look like image/png") {
		t.Errorf("warnings = %q, want one for the misnamed png", res.Warnings)
	}
	if _, found := res.Package.Object["spec"].(map[string]any)["icons"]; found {
		t.Error("spec.icons set from an unsupported icon")
	}
}

// TestKindPrefixedMetadata puts two CRDs in one file, in one directory, with
// icons and ui-schemas for each kind (mytype.icon.svg, mytype.ui-schema.yaml)
// and for one kind and version, and checks which file each CRD gets.
func TestKindPrefixedMetadata(t *testing.T) {
	dir := "resources/example.org"
	beta := strings.Replace(crdYAML("example.org", "Beta", "betas", "v1"), "  version: v1\n",
		"  versions:\n  - name: v1\n  - name: v2\n", 1)
	files := map[string]string{
		"app.yaml":                         minimalApp,
		"icon.svg":                         iconFile("svg"), // farther than any icon below
		"ui-schema.yaml":                   "root: 0\n",
		dir + "/crds.crd.yaml":             crdYAML("example.org", "Alpha", "alphas", "v1") + "---\n" + beta,
		dir + "/icon.png":                  iconFile("png"),
		dir + "/alpha.icon.gif":            iconFile("gif"), // kind beats plain, whatever the format
		dir + "/beta.icon.svg":             iconFile("svg"),
		dir + "/beta.v2.icon.jpg":          iconFile("jpg"), // kind.version beats kind
		dir + "/ui-schema.yaml":            "plain: 1\n",
		dir + "/alpha.ui-schema.yaml":      "---\nalpha: 2\n",
		dir + "/beta.ui-schema.yaml":       "beta: 3\n",
		dir + "/beta.v2.ui-schema.yaml":    "betaV2: 4\n# comment kept\n",
		dir + "/gamma.ui-schema.yaml":      "gamma: 5\n",
		"resources/other/alpha.icon.png":   iconFile("png"), // a sibling directory: not Alpha's
		dir + "/alpha.v1.x.ui-schema.yaml": "not a ui-schema name\n",
	}
	res := mustTranslate(t, regTree(files), Options{})
	if len(res.CRDs) != 2 {
		t.Fatalf("got %d CRDs, want the 2 of crds.crd.yaml", len(res.CRDs))
	}
	want := []struct{ icon, ui string }{
		{dataURI("image/gif", iconFile("gif")), "root: 0\n---\nplain: 1\n---\nalpha: 2\n"},
		{dataURI("image/jpeg", iconFile("jpg")), "root: 0\n---\nplain: 1\n---\nbeta: 3\n---\nbetaV2: 4\n# comment kept\n"},
	}
	for i, c := range res.CRDs {
		ann := c.GetAnnotations()
		if ann[AnnotationIconDataURI] != want[i].icon {
			t.Errorf("%s icon = %.40q, want %.40q", c.GetName(), ann[AnnotationIconDataURI], want[i].icon)
		}
		if ann[AnnotationUISchema] != want[i].ui {
			t.Errorf("%s ui-schema = %q, want %q", c.GetName(), ann[AnnotationUISchema], want[i].ui)
		}
	}
	if !hasWarning(res, "alpha.v1.x.ui-schema.yaml", "name is not [kind[.version].]ui-schema.yaml") {
		t.Errorf("warnings = %q, want the badly named ui-schema reported", res.Warnings)
	}
	for _, f := range []string{dir + "/gamma.ui-schema.yaml", "resources/other/alpha.icon.png"} {
		if !hasWarning(res, path.Join(DefaultRoot, f), "applies to no CustomResourceDefinition") {
			t.Errorf("warnings = %q, want %s reported as unused", res.Warnings, f)
		}
	}
}

// TestResourceMetadataByID matches *resource.yaml files to CRDs by id, not
// by file name, and reads the table's shortOverview key too.
func TestResourceMetadataByID(t *testing.T) {
	dir := "resources/example.org"
	res := mustTranslate(t, regTree(map[string]string{
		"app.yaml":                  minimalApp,
		dir + "/crds.crd.yaml":      crdYAML("example.org", "Alpha", "alphas", "v1") + "---\n" + crdYAML("example.org", "Beta", "betas", "v1"),
		dir + "/a.resource.yaml":    "id: beta\ntitle: Beta\nshortOverview: short beta\n",
		dir + "/b.resource.yaml":    "id: Alpha\ntitle: Alpha\noverviewShort: short alpha\n",
		dir + "/noid.resource.yaml": "title: nobody\n",
		dir + "/c.resource.yaml":    "id: ALPHA\ntitle: Shadowed\n",
	}), Options{})
	for i, want := range []struct{ title, short string }{{"Alpha", "short alpha"}, {"Beta", "short beta"}} {
		ann := res.CRDs[i].GetAnnotations()
		if ann[AnnotationResourceTitle] != want.title || ann[AnnotationResourceOverviewShort] != want.short {
			t.Errorf("%s: resource-title %q overview-short %q, want %q %q", res.CRDs[i].GetName(),
				ann[AnnotationResourceTitle], ann[AnnotationResourceOverviewShort], want.title, want.short)
		}
		if _, set := ann[AnnotationResourceCategory]; set {
			t.Errorf("%s: empty category set as an annotation", res.CRDs[i].GetName())
		}
	}
	dup := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "c.resource.yaml") && strings.Contains(w, "b.resource.yaml, which is used instead") {
			dup++
		}
	}
	if dup != 1 {
		t.Errorf("warnings = %q, want the shadowed resource.yaml reported once", res.Warnings)
	}
	if !hasWarning(res, "noid.resource.yaml", "no id") {
		t.Errorf("warnings = %q, want the id-less resource.yaml reported", res.Warnings)
	}
}

// TestPreAnnotatedCRD keeps a CRD's own labels and annotations, lets the
// package's files win over pre-annotated values, and appends ui-schemas.
func TestPreAnnotatedCRD(t *testing.T) {
	crd := strings.Replace(crdYAML("example.org", "Widget", "widgets", "v1"), "metadata:\n", `metadata:
  labels:
    team: storage
  annotations:
    keep.example.org/note: kept
    packages.crossplane.io/resource-title: Old Title
    packages.crossplane.io/resource-readme: Prebuilt readme
    packages.crossplane.io/ui-schema: |
      prebuilt: true
`, 1)
	res := mustTranslate(t, regTree(map[string]string{
		"app.yaml":                        minimalApp,
		"resources/crd.yaml":              crd,
		"resources/resource.yaml":         "id: widget\ntitle: New Title\n",
		"resources/widget.ui-schema.yaml": "fromFile: true\n",
	}), Options{})
	c := res.CRDs[0]
	want := map[string]string{
		"keep.example.org/note":  "kept",
		AnnotationResourceTitle:  "New Title",
		AnnotationResourceReadme: "Prebuilt readme",
		AnnotationUISchema:       "prebuilt: true\n---\nfromFile: true\n",
		AnnotationPackageTitle:   "Test Package",
	}
	ann := c.GetAnnotations()
	for k, v := range want {
		if ann[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, ann[k], v)
		}
	}
	if l := c.GetLabels(); l["team"] != "storage" || l[LabelManagedBy] != LabelValuePackageManager {
		t.Errorf("labels = %v", l)
	}
	if !hasWarning(res, AnnotationResourceTitle, "replaced") {
		t.Errorf("warnings = %q, want the replaced title reported", res.Warnings)
	}
}
