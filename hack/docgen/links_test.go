package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// markdownFiles are README.md and every Markdown file under docs/, by their
// paths relative to the module root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(moduleRoot, "docs"), func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(moduleRoot, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
	code    = regexp.MustCompile("`[^`\n]*`")
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	anchor  = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
)

// prose is a Markdown file without its code: links in code are no links.
func prose(s string) string {
	return code.ReplaceAllString(fence.ReplaceAllString(s, ""), "")
}

// slug is the anchor GitHub gives a heading: lower case, punctuation but
// hyphens and underscores dropped, each space a hyphen.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the fragments a Markdown file's headings (and explicit
// anchors) answer to, numbered as GitHub numbers repeated headings.
func anchors(s string) map[string]bool {
	got := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(s, ""), -1) {
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			got[a+"-"+strconv.Itoa(n)] = true
		} else {
			got[a] = true
		}
		seen[a]++
	}
	for _, m := range anchor.FindAllStringSubmatch(s, -1) {
		got[m[1]] = true
	}
	return got
}

// TestLinks: every relative link in README.md and docs/ names a file or
// directory that exists, and every fragment a heading of its page.
func TestLinks(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files: %v", len(files), files)
	}
	text := map[string]string{}
	read := func(name string) (string, bool) {
		if s, ok := text[name]; ok {
			return s, true
		}
		b, err := os.ReadFile(filepath.Join(moduleRoot, filepath.FromSlash(name)))
		if err != nil {
			return "", false
		}
		text[name] = string(b)
		return string(b), true
	}
	checked := 0
	for _, name := range files {
		s, _ := read(name)
		for _, m := range link.FindAllStringSubmatch(prose(s), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, frag, _ := strings.Cut(target, "#")
			dest := name
			if path != "" {
				dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), path)))
				if strings.HasPrefix(dest, "../") {
					t.Errorf("%s: %s leads out of the repository", name, target)
					continue
				}
				if _, err := os.Stat(filepath.Join(moduleRoot, filepath.FromSlash(dest))); err != nil {
					t.Errorf("%s: %s: no such file", name, target)
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: %s: a fragment of a file that is no Markdown", name, target)
				continue
			}
			d, _ := read(dest)
			if !anchors(d)[frag] {
				t.Errorf("%s: %s: %s has no heading #%s", name, target, dest, frag)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d links; the docs have more", checked)
	}
}

// TestREADME: the README stays short (what kubectl-xpkg is, install, a
// tour, links, the set-up), its set-up names the two commands CI runs
// (.ci/run), and it links to every guide in docs/.
func TestREADME(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines; keep it to 300 and move the rest to docs/", n)
	}
	ci, err := os.ReadFile(filepath.Join(moduleRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"make demo", "make test"} {
		if !regexp.MustCompile(`(?m)^` + cmd + `\b`).Match(ci) {
			t.Errorf(".ci/run does not run %q", cmd)
		}
		if !regexp.MustCompile("(?m)^" + cmd + " +# ").MatchString(readme) {
			t.Errorf("README's set-up does not give %q", cmd)
		}
	}
	guides, err := filepath.Glob(filepath.Join(moduleRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guides {
		name := "docs/" + filepath.Base(g)
		if !strings.Contains(readme, "]("+name) {
			t.Errorf("README.md does not link to %s", name)
		}
	}
}
