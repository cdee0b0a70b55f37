package extract

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Split writes one YAML file per object into the directory d, named by kind
// and name (`customresourcedefinition_buckets.s3.aws.yaml`; the meta object
// is `crossplane.yaml`, the name the on-disk format gives it), and returns
// the file names in stream order.
func Split(d *Dir, r io.Reader, o Options) ([]string, error) {
	var names []string
	used := map[string]bool{}
	err := eachObject(r, o, func(obj *xpkg.Object) error {
		name := fileName(obj, used)
		names = append(names, name)
		if err := os.WriteFile(d.Path(name), obj.Raw, 0o666); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	})
	return names, err
}

var (
	unsafeChars = regexp.MustCompile(`[^a-z0-9._-]+|\.\.+`)
	dashes      = regexp.MustCompile(`-{2,}`)
)

// clean makes s a harmless part of a file name.
func clean(s string) string {
	return dashes.ReplaceAllString(unsafeChars.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// fileName is safe whatever the document says: lower-cased, stripped of
// separators and dots at the start, and made unique.
func fileName(obj *xpkg.Object, used map[string]bool) string {
	base := "crossplane"
	if !xpkg.IsMeta(obj) {
		kind, name := clean(obj.GVK().Kind), clean(obj.Name())
		base = strings.TrimLeft(kind+"_"+name, ".-_")
		if base == "" || kind == "" {
			base = fmt.Sprintf("document-%d", obj.Index)
		}
	}
	if len(base) > 200 {
		base = base[:200]
	}
	name := base + ".yaml"
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s-%d.yaml", base, i)
	}
	used[name] = true
	return name
}
