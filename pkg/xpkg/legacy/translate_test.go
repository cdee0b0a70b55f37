package legacy

import (
	"encoding/base64"
	"io/fs"
	"maps"
	"os"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"
)

// TestSamplePackageRecord checks the Package record built from the design's
// example app.yaml and install.yaml, field by field.
func TestSamplePackageRecord(t *testing.T) {
	res := translateSample(t)
	pkg := res.Package.Object
	checkFields(t, pkg, sampleRecordFields())
	containers := field(t, pkg, "spec", "controller", "deployment", "spec", "template", "spec", "containers").([]any)
	if len(containers) != 1 {
		t.Fatalf("containers = %d, want 1", len(containers))
	}
	c := containers[0].(map[string]any)
	if c["name"] != "sample-stack-controller" || c["image"] != "registry.crossplane.io/crossplane/sample-stack:0.0.1" {
		t.Errorf("container = %v %v, want sample-stack-controller with registry.crossplane.io/crossplane/sample-stack:0.0.1", c["name"], c["image"])
	}
	if env := c["env"].([]any); len(env) != 2 {
		t.Errorf("container env has %d entries, want POD_NAME and POD_NAMESPACE", len(env))
	}
	wantKeys := []string{"category", "company", "controller", "customresourcedefinitions", "dependsOn", "icons",
		"keywords", "license", "maintainers", "overview", "overviewShort", "owners", "packageType",
		"permissionScope", "readme", "source", "title", "version", "website"}
	spec := pkg["spec"].(map[string]any)
	if got := slices.Sorted(maps.Keys(spec)); !slices.Equal(got, wantKeys) {
		t.Errorf("spec keys = %v, want %v (app.yaml's format apiVersion stays out)", got, wantKeys)
	}
	// The seed's layout repeats the mysql CRD per version directory; that is
	// the only oddity of the sample.
	if len(res.Warnings) != 1 || !hasWarning(res, "mysqls.databases.foocompany.io", "is also defined in") {
		t.Errorf("warnings = %q, want only the mysql per-version note", res.Warnings)
	}
}

// sampleRecordFields are the Package record fields the sample must give.
func sampleRecordFields() map[string]any {
	return map[string]any{
		"apiVersion":    "packages.crossplane.io/v1alpha1",
		"kind":          "Package",
		"metadata.name": "sample-stack", // the repository name of Options.Image
		// app.yaml, key by key.
		"spec.version":         "0.0.1",
		"spec.title":           "Sample Crossplane Stack",
		"spec.overviewShort":   "A one line plain text explanation of this package",
		"spec.overview":        "Multiple line plain text description of this package.\n",
		"spec.readme":          "*Markdown* describing the sample Crossplane Stack project in more detail\n",
		"spec.maintainers":     []any{map[string]any{"name": "Jared Watts", "email": "jared@upbound.io"}},
		"spec.owners":          []any{map[string]any{"name": "Bassam Tabbara", "email": "bassam@upbound.io"}},
		"spec.company":         "Upbound",
		"spec.category":        "Database",
		"spec.keywords":        []any{"samples", "examples", "tutorials"},
		"spec.website":         "https://crossplane.io",
		"spec.source":          "https://github.com/crossplane/sample-stack",
		"spec.license":         "Apache-2.0",
		"spec.packageType":     "Provider",
		"spec.permissionScope": "Cluster",
		"spec.dependsOn": []any{
			map[string]any{"crd": "mytype.mygroup.example.org/v1alpha1"},
			map[string]any{"crd": "*.yourstack.example.org/v1alpha1"},
		},
		// The root icon.svg, the icon of the package.
		"spec.icons": []any{map[string]any{
			"base64data": "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4K",
			"mediatype":  "image/svg+xml",
		}},
		// Every version of every owned CRD, in tree order.
		"spec.customresourcedefinitions": []any{
			map[string]any{"kind": "MySQL", "apiVersion": "databases.foocompany.io/v1alpha1"},
			map[string]any{"kind": "MySQL", "apiVersion": "databases.foocompany.io/v1beta1"},
			map[string]any{"kind": "Mytype", "apiVersion": "samples.crossplane.io/v1alpha1"},
		},
		// install.yaml's Deployment, its omitted image filled from the
		// package image and prefixed with the source registry.
		"spec.controller.deployment.name":          "crossplane-sample-stack",
		"spec.controller.deployment.spec.replicas": int64(1),
		"spec.controller.deployment.spec.selector": map[string]any{
			"matchLabels": map[string]any{"core.crossplane.io/name": "crossplane-sample-stack"},
		},
		"spec.controller.deployment.spec.template.metadata.name": "sample-stack-controller",
	}
}

// TestSampleMatchesSeedAnnotatedCRD compares the translated mytype CRD with
// the design's "Example CRD with Package metadata", object for object.
func TestSampleMatchesSeedAnnotatedCRD(t *testing.T) {
	b, err := os.ReadFile("testdata/seed-annotated-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	meta := want["metadata"].(map[string]any)
	// ownerReferences point at the PackageInstall; the package manager adds
	// them when it installs, not when it unpacks.
	delete(meta, "ownerReferences")
	// The example's package-title does not match the example app.yaml's
	// title; the table says the annotation is app.yaml's title.
	ann := meta["annotations"].(map[string]any)
	if ann[AnnotationPackageTitle] != "Crossplane Sample Stack" {
		t.Fatalf("seed example changed: package-title %v", ann[AnnotationPackageTitle])
	}
	ann[AnnotationPackageTitle] = "Sample Crossplane Stack"

	got := crdNamed(t, translateSample(t), "mytypes.samples.crossplane.io", "v1alpha1")
	if reflect.DeepEqual(got.Object, want) {
		return
	}
	gotAnn := got.GetAnnotations()
	for k, v := range ann {
		if gotAnn[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, gotAnn[k], v)
		}
	}
	t.Errorf("CRD differs from the seed example:\n got %v\nwant %v", got.Object, want)
}

// tableRow is one row of the design's annotation table, with the fixture
// file its value must come from.
type tableRow struct {
	key, file, field string
}

// TestAnnotationTable checks, annotation by annotation, that each CRD of the
// sample carries the value of the file and field the design's table names,
// read here straight from the fixture files.
func TestAnnotationTable(t *testing.T) {
	res := translateSample(t)
	const samples = "resources/samples.crossplane.io"
	const mytype = samples + "/mytype/v1alpha1"
	const foo = "resources/databases.foocompany.io"
	groupRows := func(dir string) []tableRow {
		return []tableRow{
			{AnnotationGroupTitle, dir + "/group.yaml", "title"},
			{AnnotationGroupOverview, dir + "/group.yaml", "overview"},
			{AnnotationGroupOverviewShort, dir + "/group.yaml", "overviewShort"},
			{AnnotationGroupReadme, dir + "/group.yaml", "readme"},
		}
	}
	resourceRows := func(dir string) []tableRow {
		return []tableRow{
			{AnnotationResourceCategory, dir + "/resource.yaml", "category"},
			{AnnotationResourceTitle, dir + "/resource.yaml", "title"},
			{AnnotationResourceTitlePlural, dir + "/resource.yaml", "titlePlural"},
			{AnnotationResourceOverview, dir + "/resource.yaml", "overview"},
			// The table says shortOverview; the example resource.yaml, and
			// so the fixture, writes overviewShort.
			{AnnotationResourceOverviewShort, dir + "/resource.yaml", "overviewShort"},
			{AnnotationResourceReadme, dir + "/resource.yaml", "readme"},
		}
	}
	cases := []struct {
		name, version string
		rows          []tableRow
		icon          string   // file of the icon-data-uri
		uiSchemas     []string // files of the ui-schema, in order
	}{
		{"mytypes.samples.crossplane.io", "v1alpha1", append(groupRows(samples), resourceRows(mytype)...),
			"icon.svg", []string{"ui-schema.yaml", mytype + "/mytype.ui-schema.yaml"}},
		{"mysqls.databases.foocompany.io", "v1alpha1", append(groupRows(foo), resourceRows(foo+"/mysql/v1alpha1")...),
			foo + "/icon.png", []string{"ui-schema.yaml"}},
		{"mysqls.databases.foocompany.io", "v1beta1", append(groupRows(foo), resourceRows(foo+"/mysql/v1beta1")...),
			foo + "/icon.png", []string{"ui-schema.yaml", foo + "/mysql/v1beta1/mysql.v1beta1.ui-schema.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+tc.version, func(t *testing.T) {
			crd := crdNamed(t, res, tc.name, tc.version)
			ann := crd.GetAnnotations()
			rows := append([]tableRow{{AnnotationPackageTitle, "app.yaml", "title"}}, tc.rows...)
			for _, r := range rows {
				if want := fixtureField(t, r.file, r.field); ann[r.key] != want || want == "" {
					t.Errorf("%s = %q, want %s %s %q", r.key, ann[r.key], r.file, r.field, want)
				}
			}
			checkIconAndUISchema(t, ann, tc.icon, tc.uiSchemas)
			labels := crd.GetLabels()
			if labels[LabelManagedBy] != "package-manager" || labels["controller-tools.k8s.io"] != "1.0" {
				t.Errorf("labels = %v, want managed-by package-manager and the source's controller-tools label", labels)
			}
			if len(ann) != len(rows)+2 {
				t.Errorf("%d annotations, want %d: %v", len(ann), len(rows)+2, slices.Sorted(maps.Keys(ann)))
			}
		})
	}
}

// checkIconAndUISchema checks the two annotations built from whole files:
// the icon as a base64 data URI and the ui-schema files as one
// multi-document YAML.
func checkIconAndUISchema(t *testing.T, ann map[string]string, icon string, uis []string) {
	t.Helper()
	media := map[string]string{".svg": "image/svg+xml", ".png": "image/png"}[path.Ext(icon)]
	wantIcon := "data:" + media + ";base64," + base64.StdEncoding.EncodeToString(fixtureBytes(t, icon))
	if ann[AnnotationIconDataURI] != wantIcon {
		t.Errorf("icon-data-uri = %q, want %q (%s)", ann[AnnotationIconDataURI], wantIcon, icon)
	}
	var docs []string
	for _, f := range uis {
		docs = append(docs, strings.TrimRight(string(fixtureBytes(t, f)), "\n"))
	}
	if want := strings.Join(docs, "\n---\n") + "\n"; ann[AnnotationUISchema] != want {
		t.Errorf("ui-schema = %q, want %q", ann[AnnotationUISchema], want)
	}
}

func fixtureBytes(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(path.Join("testdata/sample/.registry", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureField reads one string field of a fixture YAML file.
func fixtureField(t *testing.T, rel, key string) string {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(fixtureBytes(t, rel), &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[key].(string)
	return s
}

// TestExtensionPackage translates a package of the older Extensions design:
// its app.yaml (description, links), rbac.yaml and icon.jpg.
func TestExtensionPackage(t *testing.T) {
	res, err := Translate(os.DirFS("testdata/extension"), Options{Source: "registry.crossplane.io"})
	if err != nil {
		t.Fatal(err)
	}
	jpeg := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(mustRead(t, "testdata/extension/.registry/icon.jpg"))
	checkFields(t, res.Package.Object, map[string]any{
		"metadata.name":    "redis-controller", // no image given: the Deployment's name
		"spec.title":       "Sample Crossplane Extension",
		"spec.version":     "0.0.1",
		"spec.description": "Markdown describing this sample Crossplane extension project.\n",
		"spec.links": []any{
			map[string]any{"description": "Website", "url": "https://upbound.io"},
			map[string]any{"description": "Source Code", "url": "https://github.com/crossplaneio/sample-extension"},
		},
		"spec.permissions.rules": []any{map[string]any{
			"apiGroups": []any{""},
			"resources": []any{"secrets", "serviceaccounts", "events", "namespaces"},
			"verbs":     []any{"get", "list", "watch", "create", "update", "patch", "delete"},
		}},
		"spec.icons": []any{map[string]any{"base64data": strings.TrimPrefix(jpeg, "data:image/jpeg;base64,"), "mediatype": "image/jpeg"}},
		"spec.customresourcedefinitions": []any{
			map[string]any{"kind": "RedisCluster", "apiVersion": "cache.crossplane.io/v1alpha1"},
		},
		"spec.controller.deployment.name": "redis-controller",
	})
	c := field(t, res.Package.Object, "spec", "controller", "deployment", "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if c["image"] != "registry.crossplane.io/redis/redis-crossplane-controller:2.0.9" || c["imagePullPolicy"] != "Always" {
		t.Errorf("container image %v policy %v, want the source-prefixed image and its own Always", c["image"], c["imagePullPolicy"])
	}
	ann := res.CRDs[0].GetAnnotations()
	if ann[AnnotationPackageTitle] != "Sample Crossplane Extension" || ann[AnnotationIconDataURI] != jpeg {
		t.Errorf("CRD annotations = %v", ann)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings = %q, want none", res.Warnings)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIsLegacy recognises the tree by its directory, not by a link to one.
func TestIsLegacy(t *testing.T) {
	cases := map[string]struct {
		fsys fstest.MapFS
		want bool
	}{
		"sample tree":      {regTree(map[string]string{"app.yaml": minimalApp}), true},
		"tree without app": {regTree(map[string]string{"resources/x.crd.yaml": ""}), true},
		"v2 package":       {fstest.MapFS{"package.yaml": {Data: []byte("kind: Provider")}}, false},
		"file, not dir":    {fstest.MapFS{".registry": {Data: []byte("x")}}, false},
		"symlinked dir": {fstest.MapFS{
			".registry":     {Data: []byte("real"), Mode: fs.ModeSymlink},
			"real/app.yaml": {Data: []byte(minimalApp)},
		}, false},
	}
	for name, tc := range cases {
		if got := IsLegacy(tc.fsys); got != tc.want {
			t.Errorf("%s: IsLegacy = %v, want %v", name, got, tc.want)
		}
	}
	if !IsLegacy(os.DirFS("testdata/sample")) || IsLegacy(os.DirFS("testdata")) || IsLegacy(nil) {
		t.Error("IsLegacy on the testdata directories is wrong")
	}
}
