package manifest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
	providerA = "apiVersion: pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: a\n"
	functionB = "apiVersion: pkg.crossplane.io/v1beta1\nkind: Function\nmetadata:\n  name: b\n"
	configC   = `{"apiVersion": "pkg.crossplane.io/v1", "kind": "Configuration", "metadata": {"name": "c"}}`
)

// readCase is one Read over files written to a temporary directory, which
// is the working directory, so places read "a.yaml:3".
type readCase struct {
	name  string
	files map[string]string // path: content
	links map[string]string // path: link target
	paths []string
	stdin *string
	opts  Options

	packages []string // "where kind/name", in order
	ignored  map[string]int
	err      string // the whole error text; "" for none
}

func str(s string) *string { return &s }

func TestRead(t *testing.T) {
	for _, tc := range readCases() {
		t.Run(tc.name, func(t *testing.T) { runReadCase(t, tc) })
	}
}

func readCases() []readCase {
	var cases []readCase
	for _, group := range [][]readCase{documentCases(), pathCases(), objectCases(), errorCases()} {
		cases = append(cases, group...)
	}
	return cases
}

func runReadCase(t *testing.T, tc readCase) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, name := range slices.Sorted(maps.Keys(tc.files)) {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(tc.files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range tc.links {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	if tc.stdin != nil {
		tc.opts.Stdin = strings.NewReader(*tc.stdin)
	}
	set, err := Read(tc.paths, tc.opts)
	if tc.err != "" || err != nil {
		if err == nil || err.Error() != tc.err {
			t.Fatalf("error:\n got %v\nwant %s", err, tc.err)
		}
		return
	}
	var got []string
	for _, o := range set.Packages {
		got = append(got, fmt.Sprintf("%s %s/%s", o.Where(), strings.ToLower(o.GetKind()), o.GetName()))
	}
	if !slices.Equal(got, tc.packages) {
		t.Errorf("packages:\n got %q\nwant %q", got, tc.packages)
	}
	want := tc.ignored
	if want == nil {
		want = map[string]int{}
	}
	total := 0
	for _, n := range want {
		total += n
	}
	if !maps.Equal(set.IgnoredKinds, want) || set.Ignored != total {
		t.Errorf("ignored: got %d %v, want %d %v", set.Ignored, set.IgnoredKinds, total, want)
	}
}

// documentCases split files into documents and decode them.
func documentCases() []readCase {
	return []readCase{{
		name: "a ConfigMap and two providers, with their lines",
		files: map[string]string{"a.yaml": "# the platform's providers\n" + configMap +
			"---\n" + providerA + "spec:\n  package: xpkg.crossplane.io/crossplane-contrib/provider-aws:v1.0.0\n" +
			"--- # the second\n\n# gcp\n" + strings.ReplaceAll(providerA, "name: a", "name: gcp")},
		paths:    []string{"a.yaml"},
		packages: []string{"a.yaml:7 provider/a", "a.yaml:16 provider/gcp"},
		ignored:  map[string]int{"ConfigMap": 1},
	}, {
		name: "a YAML error in the third document is reported at its line in the file",
		files: map[string]string{"bad.yaml": configMap + "---\n" + configMap + "---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: x: y\n---\n" + providerA},
		paths: []string{"bad.yaml"},
		err:   "bad.yaml:15: invalid YAML: mapping values are not allowed in this context",
	}, {
		name:     "empty and comment-only documents are skipped",
		files:    map[string]string{"c.yaml": "# header\n---\n---\n\n  \n---\n# only a comment\n# and another\n---\r\n" + providerA + "---\n# trailer\n"},
		paths:    []string{"c.yaml"},
		packages: []string{"c.yaml:10 provider/a"},
	}, {
		name:     "a ... document end ends a document",
		files:    map[string]string{"d.yaml": providerA + "...\n" + functionB},
		paths:    []string{"d.yaml"},
		packages: []string{"d.yaml:1 provider/a", "d.yaml:6 function/b"},
	}, {
		name:     "a JSON file",
		files:    map[string]string{"c.json": "\n\n" + configC + "\n"},
		paths:    []string{"c.json"},
		packages: []string{"c.json:3 configuration/c"},
	}, {
		name:  "a JSON syntax error is reported at its line",
		files: map[string]string{"c.json": "{\n  \"kind\": \"Configuration\",\n  \"metadata\": {\"name\": \"c\"}\n  \"apiVersion\": \"v1\"\n}\n"},
		paths: []string{"c.json"},
		err:   `c.json:4: invalid JSON: invalid character '"' after object key:value pair`,
	}, {
		name:  "a JSON array is refused",
		files: map[string]string{"c.json": "[" + configC + "]"},
		paths: []string{"c.json"},
		err:   "c.json:1: a JSON array; put the objects in the items of a List",
	}, {
		name:  "two JSON objects in one file are refused at the second",
		files: map[string]string{"c.json": configC + "\n\n" + configC},
		paths: []string{"c.json"},
		err:   "c.json:3: a second JSON value; put the objects in the items of a List",
	}, {
		name:  "a JSON file cut short",
		files: map[string]string{"c.json": "{\n  \"kind\": \"List\",\n\n"},
		paths: []string{"c.json"},
		err:   "c.json:2: invalid JSON: unexpected end of the file",
	}, {
		name:     "a byte order mark does not hide the first separator",
		files:    map[string]string{"bom.yaml": "\xef\xbb\xbf---\n" + providerA},
		paths:    []string{"bom.yaml"},
		packages: []string{"bom.yaml:2 provider/a"},
	}}
}

// pathCases turn -f arguments into files.
func pathCases() []readCase {
	tree := map[string]string{
		"dir/a.yaml":            providerA,
		"dir/notes.txt":         "not a manifest",
		"dir/sub/b.yml":         functionB,
		"dir/sub/deeper/c.json": configC,
	}
	return []readCase{{
		name:     "a directory without -R reads only its own files",
		files:    tree,
		paths:    []string{"dir"},
		packages: []string{"dir/a.yaml:1 provider/a"},
	}, {
		name:     "a directory with -R reads its subdirectories, in lexical order",
		files:    tree,
		paths:    []string{"dir"},
		opts:     Options{Recursive: true},
		packages: []string{"dir/a.yaml:1 provider/a", "dir/sub/b.yml:1 function/b", "dir/sub/deeper/c.json:1 configuration/c"},
	}, {
		name:     "standard input, after a file",
		files:    map[string]string{"a.yaml": providerA},
		stdin:    str(configMap + "---\n" + functionB),
		paths:    []string{"a.yaml", "-"},
		packages: []string{"a.yaml:1 provider/a", "<stdin>:6 function/b"},
		ignored:  map[string]int{"ConfigMap": 1},
	}, {
		name:     "JSON on standard input, as kubectl get -o json writes it",
		stdin:    str(`{"apiVersion": "v1", "kind": "List", "items": [` + configC + `]}`),
		paths:    []string{"-"},
		packages: []string{"<stdin>:1 configuration/c"},
	}, {
		name:  "standard input given twice",
		stdin: str(providerA),
		paths: []string{"-", "-"},
		err:   "-: standard input given twice; give - once",
	}, {
		name:  "a path that does not exist",
		paths: []string{"nope.yaml"},
		err:   "nope.yaml: no such file or directory",
	}, {
		name:  "an empty directory is an empty set",
		files: map[string]string{"empty/README.md": "no manifests here"},
		paths: []string{"empty"},
	}, {
		name:     "a file named twice, or named and in a directory named, is read once",
		files:    map[string]string{"dir/a.yaml": providerA},
		paths:    []string{"dir/a.yaml", "dir", "./dir/a.yaml"},
		packages: []string{"dir/a.yaml:1 provider/a"},
	}, {
		name:     "links to files are read, links to directories are not followed",
		files:    map[string]string{"real/a.yaml": providerA, "dir/b.yaml": functionB},
		links:    map[string]string{"dir/link.yaml": "../real/a.yaml", "dir/loop": ".", "dir/other.yaml": "../real"},
		paths:    []string{"dir"},
		opts:     Options{Recursive: true},
		packages: []string{"dir/b.yaml:1 function/b", "dir/link.yaml:1 provider/a"},
	}, {
		name:  "a broken link in a directory",
		links: map[string]string{"dir/gone.yaml": "missing.yaml"},
		paths: []string{"dir"},
		err:   "dir/gone.yaml: broken link: no such file or directory",
	}, {
		name:  "a file over the size limit",
		files: map[string]string{"big.yaml": providerA + "# " + strings.Repeat("x", 200) + "\n"},
		paths: []string{"big.yaml"},
		opts:  Options{MaxBytes: 100},
		err:   fmt.Sprintf("big.yaml: %d bytes, more than the 100 bytes a manifest file may hold; split it", len(providerA)+203),
	}, {
		name:  "standard input over the size limit",
		stdin: str(providerA + strings.Repeat("# padding\n", 120000)),
		paths: []string{"-"},
		opts:  Options{MaxBytes: 1 << 20},
		err:   "-: more than the 1 MiB a manifest file may hold; split it",
	}}
}

// objectCases tell packages from other objects.
func objectCases() []readCase {
	list := "apiVersion: v1\nkind: List\nitems:\n" + item(configMap) + item(providerA) + item(functionB)
	return []readCase{{
		name:     "a List's items are flattened, at the List's line",
		files:    map[string]string{"l.yaml": configMap + "---\n" + list},
		paths:    []string{"l.yaml"},
		packages: []string{"l.yaml:6 provider/a", "l.yaml:6 function/b"},
		ignored:  map[string]int{"ConfigMap": 2},
	}, {
		name: "a ProviderList from kubectl get -o json, and an empty one",
		files: map[string]string{
			"p.json": `{"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderList", "items": [` + yamlToJSONish(providerA) + `]}`,
			"q.yaml": "apiVersion: pkg.crossplane.io/v1\nkind: FunctionList\nitems: null\n",
		},
		paths:    []string{"p.json", "q.yaml"},
		packages: []string{"p.json:1 provider/a"},
	}, {
		name: "the IBM group is a package group; a meta Provider and other pkg kinds are not packages",
		files: map[string]string{"ibm.yaml": strings.ReplaceAll(providerA, "pkg.crossplane.io", "pkg.ibm.crossplane.io") +
			"---\n" + strings.ReplaceAll(providerA, "pkg.crossplane.io", "meta.pkg.crossplane.io") +
			"---\napiVersion: pkg.crossplane.io/v1beta1\nkind: DeploymentRuntimeConfig\nmetadata:\n  name: default\n"},
		paths:    []string{"ibm.yaml"},
		packages: []string{"ibm.yaml:1 provider/a"},
		ignored:  map[string]int{"Provider.meta.pkg.crossplane.io": 1, "DeploymentRuntimeConfig": 1},
	}, {
		name: "one name in two kinds or two groups is no duplicate",
		files: map[string]string{"a.yaml": providerA + "---\n" +
			strings.ReplaceAll(providerA, "Provider", "Configuration") + "---\n" +
			strings.ReplaceAll(providerA, "pkg.crossplane.io", "pkg.ibm.crossplane.io")},
		paths:    []string{"a.yaml"},
		packages: []string{"a.yaml:1 provider/a", "a.yaml:6 configuration/a", "a.yaml:11 provider/a"},
	}}
}

// errorCases are manifests the reader refuses.
func errorCases() []readCase {
	many := map[string]string{}
	for i := range 25 {
		many[fmt.Sprintf("m/%02d.yaml", i)] = "apiVersion: v1\n"
	}
	manyErr := []string{}
	for i := range 20 {
		manyErr = append(manyErr, fmt.Sprintf("m/%02d.yaml:1: not a Kubernetes object: no kind", i))
	}
	return []readCase{{
		name: "one package in two files, in two versions, one with a namespace",
		files: map[string]string{"a.yaml": providerA, "dir/b.yaml": configMap + "---\n# again\n\n\n" +
			strings.ReplaceAll(providerA, "v1\n", "v1beta1\n") + "  namespace: ignored\n"},
		paths: []string{"a.yaml", "dir"},
		err:   "provider/a is defined twice: a.yaml:1 and dir/b.yaml:9; keep one",
	}, {
		name:  "one package three times",
		files: map[string]string{"a.yaml": functionB + "---\n" + functionB + "---\n" + functionB},
		paths: []string{"a.yaml"},
		err:   "function/b is defined 3 times: a.yaml:1, a.yaml:6 and a.yaml:11; keep one",
	}, {
		name:  "one package seven times: five places are named",
		files: map[string]string{"a.yaml": strings.Repeat(functionB+"---\n", 7)},
		paths: []string{"a.yaml"},
		err:   "function/b is defined 7 times: a.yaml:1, a.yaml:6, a.yaml:11, a.yaml:16, a.yaml:21 and 2 more; keep one",
	}, {
		name:  "a package without a name",
		files: map[string]string{"p.yaml": configMap + "---\napiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  labels: {a: b}\n"},
		paths: []string{"p.yaml"},
		err:   "p.yaml:6: function has no metadata.name; give the package a name",
	}, {
		name: "objects without kind or apiVersion, a scalar document, a bad List item",
		files: map[string]string{"j.yaml": "metadata:\n  name: x\n---\nkind: Provider\n---\njust some words\n---\n" +
			"apiVersion: v1\nkind: List\nitems:\n- 42\n- {apiVersion: v1}\n"},
		paths: []string{"j.yaml"},
		err: strings.Join([]string{
			"j.yaml:1: not a Kubernetes object: no kind",
			"j.yaml:4: not a Kubernetes object: no apiVersion",
			"j.yaml:6: not a Kubernetes object: the document is a string, not a mapping with apiVersion and kind",
			"j.yaml:8: item 1 of the List: not a Kubernetes object: a number, not a mapping",
			"j.yaml:8: item 2 of the List: not a Kubernetes object: no kind",
		}, "\n"),
	}, {
		name:  "a separator followed by content",
		files: map[string]string{"s.yaml": providerA + "--- " + strings.TrimSuffix(functionB, "\n")},
		paths: []string{"s.yaml"},
		err:   "s.yaml:5: only a comment may follow a --- document separator on its line",
	}, {
		name:  "at most 20 errors, then a count",
		files: many,
		paths: []string{"m"},
		err:   strings.Join(append(manyErr, "and 5 more errors"), "\n"),
	}}
}

// item writes a manifest as an item of a YAML list.
func item(manifest string) string {
	return "- " + strings.ReplaceAll(strings.TrimSuffix(manifest, "\n"), "\n", "\n  ") + "\n"
}

// yamlToJSONish writes a flat test manifest of the form of providerA as
// JSON.
func yamlToJSONish(y string) string {
	v, err := yamlValue([]byte(y))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf(`{"apiVersion": %q, "kind": %q, "metadata": {"name": %q}}`,
		v.(map[string]any)["apiVersion"], v.(map[string]any)["kind"],
		v.(map[string]any)["metadata"].(map[string]any)["name"])
}
