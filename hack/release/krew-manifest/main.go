// Command krew-manifest renders the Krew manifest template (krew/xpkg.yaml)
// for a release tag the way krew-release-bot does, but from the archives in a
// local dist/ directory instead of the published release:
//
//	go run ./hack/release/krew-manifest -tag v0.1.0 -dist dist \
//	    -base-url https://github.com/kubectl-xpkg/kubectl-xpkg/releases/download
//
// The bot executes the template with text/template, .TagName and two
// functions: addURIAndSha URL TAG, which executes URL as a template of its own
// (.TagName, and .Version: the tag's first dotted number) and returns
// "uri: <URL>\n    sha256: <sha256 of the asset>", and indent N S, which
// re-pads that output. Here each uri must be <base-url>/<tag>/<file> and
// <file> must be in -dist: its sha256 is computed from the local file. Every
// archive in -dist must be named by the manifest; with -allow-missing, a
// platform whose archive is not in -dist (a host-only snapshot) gets an
// all-zero sha256 instead of an error. The manifest is written to
// -o (by default <dist>/krew/xpkg.yaml: krew's validator takes the plugin name
// from the file name) and its path printed.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
)

func main() {
	tag := flag.String("tag", "", "release tag, e.g. v0.1.0 (required)")
	dist := flag.String("dist", "dist", "directory holding the release archives")
	tmpl := flag.String("template", "krew/xpkg.yaml", "manifest template")
	baseURL := flag.String("base-url", "https://github.com/kubectl-xpkg/kubectl-xpkg/releases/download",
		"every uri must be <base-url>/<tag>/<archive in -dist>")
	out := flag.String("o", "", "output file (default <dist>/krew/xpkg.yaml)")
	allowMissing := flag.Bool("allow-missing", false, "give archives missing from -dist an all-zero sha256")
	flag.Parse()
	if *tag == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *out == "" {
		*out = filepath.Join(*dist, "krew", "xpkg.yaml")
	}
	r := &renderer{tag: *tag, dist: *dist, allowMissing: *allowMissing,
		prefix: strings.TrimSuffix(*baseURL, "/") + "/" + *tag + "/"}
	if err := r.run(*tmpl, *out); err != nil {
		fmt.Fprintln(os.Stderr, "krew-manifest:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}

type renderer struct {
	tag, dist, prefix string
	allowMissing      bool
	used              []string // archives addURIAndSha named
}

func (r *renderer) run(tmplFile, out string) error {
	t, err := template.New(filepath.Base(tmplFile)).Funcs(template.FuncMap{
		"indent":       indent,
		"addURIAndSha": r.addURIAndSha,
	}).ParseFiles(tmplFile)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	// The bot's value has more fields (PluginOwner, ...); a template that
	// sticks to .TagName renders the same in both.
	if err := t.Execute(&buf, struct{ TagName string }{r.tag}); err != nil {
		return err
	}
	if err := r.checkAllUsed(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// addURIAndSha is the bot's function, with the sha256 of the dist/ file.
func (r *renderer) addURIAndSha(url, tag string) (string, error) {
	inner, err := template.New("url").Parse(url)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := inner.Execute(&buf, struct{ TagName, Version string }{tag, versionFromTag(tag)}); err != nil {
		return "", err
	}
	uri := buf.String()
	file, ok := strings.CutPrefix(uri, r.prefix)
	if !ok || file == "" || strings.Contains(file, "/") {
		return "", fmt.Errorf("uri %s is not %s<archive>", uri, r.prefix)
	}
	sum, err := sha256File(filepath.Join(r.dist, file))
	if errors.Is(err, fs.ErrNotExist) && r.allowMissing {
		fmt.Fprintf(os.Stderr, "krew-manifest: %s is not in %s: all-zero sha256\n", file, r.dist)
		// Quoted: unquoted, YAML reads 64 zeros as the number 0.
		return fmt.Sprintf("uri: %s\n    sha256: %q", uri, strings.Repeat("0", 64)), nil
	}
	if err != nil {
		return "", fmt.Errorf("uri %s: %w", uri, err)
	}
	r.used = append(r.used, file)
	fmt.Fprintf(os.Stderr, "krew-manifest: %s  %s\n", sum, file)
	return fmt.Sprintf("uri: %s\n    sha256: %s", uri, sum), nil
}

// checkAllUsed fails when dist/ holds an archive no platform names.
func (r *renderer) checkAllUsed() error {
	var missed []string
	for _, pattern := range []string{"*.tar.gz", "*.zip"} {
		files, err := filepath.Glob(filepath.Join(r.dist, pattern))
		if err != nil {
			return err
		}
		for _, f := range files {
			if !slices.Contains(r.used, filepath.Base(f)) {
				missed = append(missed, filepath.Base(f))
			}
		}
	}
	if len(missed) > 0 {
		return fmt.Errorf("no platform in the manifest names %s", strings.Join(missed, ", "))
	}
	return nil
}

// indent is the bot's: it first undoes the 4-space pad addURIAndSha gives
// sha256, then pads every line but the first.
func indent(spaces int, v string) string {
	v = strings.ReplaceAll(v, "    sha256:", "sha256:")
	pad := strings.Repeat(" ", spaces)
	return strings.TrimSpace(pad + strings.ReplaceAll(v, "\n", "\n"+pad))
}

var dottedNumber = regexp.MustCompile(`\d+(\.\d+)+`)

// versionFromTag is the bot's .Version: v1.2.3-rc.1 gives 1.2.3.
func versionFromTag(tag string) string {
	if v := dottedNumber.FindString(tag); v != "" {
		return v
	}
	return tag
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
