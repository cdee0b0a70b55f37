package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// moduleRoot is where docs/ is, from this package's directory.
const moduleRoot = "../.."

// TestReferenceIsCurrent: every file make docs generates is in the
// repository as the command tree generates it now, and docs/reference/
// holds no page of a command that is gone; so --help and the reference
// cannot disagree.
func TestReferenceIsCurrent(t *testing.T) {
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(mapKeys(files)) {
		got, err := os.ReadFile(filepath.Join(moduleRoot, filepath.FromSlash(name)))
		switch {
		case os.IsNotExist(err):
			t.Errorf("%s is missing: run make docs", name)
		case err != nil:
			t.Error(err)
		case !bytes.Equal(got, files[name]):
			t.Errorf("%s is stale (the command tree says otherwise): run make docs", name)
		}
	}
	pages, err := filepath.Glob(filepath.Join(moduleRoot, referenceDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		name := referenceDir + "/" + filepath.Base(p)
		if _, ok := files[name]; !ok {
			t.Errorf("%s is no command's page: run make docs, which removes it", name)
		}
	}
}

// TestEveryCommandHasAPage: each command and subcommand has its page, with
// its synopsis, usage, options and exit statuses, and its examples when it
// has any; the pages read "kubectl xpkg VERB", as the plugin is invoked.
func TestEveryCommandHasAPage(t *testing.T) {
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	visit(Command(), func(c *cobra.Command) {
		n++
		name := referenceDir + "/" + PageName(c.CommandPath())
		page, ok := files[name]
		if !ok {
			t.Errorf("%s has no page %s", c.CommandPath(), name)
			return
		}
		want := []string{"## " + c.CommandPath() + "\n", "### Synopsis", "### Options", "### Exit status", "| 0 | success |"}
		if c.Example != "" {
			want = append(want, "### Examples")
		} else if verb(c) != "" && verb(c) != "completion" {
			t.Errorf("%s has no examples for its page (plugin/help/%s.example.txt)", c.CommandPath(), verb(c))
		}
		for _, w := range want {
			if !strings.Contains(string(page), w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
		if strings.Contains(string(page), "kubectl_xpkg") {
			t.Errorf("%s links to a page by cobra's name, not PageName's", name)
		}
	})
	if n < 19 {
		t.Errorf("the command tree has %d commands; the plugin has more than 18 verbs", n)
	}
	for _, verb := range []string{"install", "upgrade", "doctor", "plan", "mirror"} {
		if _, ok := files[referenceDir+"/kubectl-xpkg_"+verb+".md"]; !ok {
			t.Errorf("no page for %s", verb)
		}
	}
}

// TestManPages: a man page per command, named as man finds it
// (kubectl-xpkg-install.1), each with its exit statuses.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	if err := writeMan(dir); err != nil {
		t.Fatal(err)
	}
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	for name := range files {
		if strings.HasPrefix(name, referenceDir+"/") {
			pages++
		}
	}
	man, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(man) != pages {
		t.Errorf("%d man pages, %d reference pages", len(man), pages)
	}
	b, err := os.ReadFile(filepath.Join(dir, "kubectl-xpkg-upgrade.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`.TH "KUBECTL-XPKG-UPGRADE" "1" "Jan 1970"`, "kubectl xpkg upgrade", "Exit status:", "124", "kubectl-xpkg(1)"} {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("kubectl-xpkg-upgrade.1 lacks %q", w)
		}
	}
}
