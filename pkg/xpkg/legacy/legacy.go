package legacy

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Options are the inputs of a translation that do not come from the tree:
// what the package manager took from the PackageInstall.
type Options struct {
	// Root is the directory in the fs.FS holding the tree; "" means
	// DefaultRoot (".registry").
	Root string
	// Source is the PackageInstall's spec.source registry. A controller image
	// that names no registry is prefixed with it.
	Source string
	// Image is the package's image reference. It fills a controller
	// container's omitted image and an omitted app.yaml version (its tag),
	// and names the record when Name is empty.
	Image string
	// Name is the record's metadata.name (the package manager used the
	// PackageInstall's). When empty it is the last path element of Image's
	// repository, else the controller Deployment's name.
	Name string
	// ImagePullPolicy (Always, IfNotPresent or Never), when set, replaces
	// the controller containers' imagePullPolicy.
	ImagePullPolicy string
	// ImagePullSecrets are added to the controller pod's imagePullSecrets.
	ImagePullSecrets []string
	// ServiceAccountAnnotations are recorded as the record's
	// spec.serviceAccount.annotations, for the controller's service account.
	ServiceAccountAnnotations map[string]string
}

// Result is a translated package.
type Result struct {
	Package  *unstructured.Unstructured   // packages.crossplane.io/v1alpha1 Package record
	CRDs     []*unstructured.Unstructured // every CRD of the package, annotated, in tree order
	Warnings []string                     // non-fatal oddities, each "path: message"
}

// Translate reads the legacy package tree at opts.Root in fsys and returns
// its Package record and annotated CRDs, as the package manager's unpack
// step produced them. It reads nothing outside fsys, follows no symbolic
// links, and fails with a one-line error naming the file at fault.
func Translate(fsys fs.FS, opts Options) (*Result, error) {
	if fsys == nil {
		return nil, errors.New("legacy: no file system to read")
	}
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	w := &warnings{}
	l := &loader{fsys: fsys, root: opts.Root, budget: MaxTotalSize, warn: w}
	t, err := l.load()
	if err != nil {
		return nil, err
	}
	if t.app == nil {
		return nil, fileErr(path.Join(opts.Root, "app.yaml"), "not found; a legacy package must have one")
	}
	app, err := parseApp(t.app, w)
	if err != nil {
		return nil, err
	}
	if err := app.resolveVersion(t.app.name, opts.Image, w); err != nil {
		return nil, err
	}
	c, err := annotateAll(t, app, w)
	if err != nil {
		return nil, err
	}
	pkg, err := buildPackage(t, app, c, &opts, w)
	if err != nil {
		return nil, err
	}
	res := &Result{Package: pkg, Warnings: *w}
	for _, crd := range c.crds {
		res.CRDs = append(res.CRDs, crd.obj)
	}
	return res, nil
}

// annotateAll reads the CRDs and metadata files and annotates every CRD.
func annotateAll(t *tree, app *appFile, w *warnings) (*contents, error) {
	c, err := readContents(t.files, w)
	if err != nil {
		return nil, err
	}
	if err := checkCRDs(c.crds, w); err != nil {
		return nil, err
	}
	a := &annotator{index: c.index, title: app.Title, warn: w}
	for _, crd := range c.crds {
		if err := a.annotate(crd); err != nil {
			return nil, err
		}
	}
	c.index.warnUnused(packageIcon(c.icons), w)
	return c, nil
}

// IsLegacy reports whether fsys holds a legacy package tree: a DefaultRoot
// directory (not a link to one). The directory alone decides, so that a tree
// missing its app.yaml is still recognised and Translate can say what is
// wrong with it.
func IsLegacy(fsys fs.FS) bool {
	if fsys == nil {
		return false
	}
	info, err := fs.Lstat(fsys, DefaultRoot)
	return err == nil && info.IsDir()
}

// normalize fills defaults and refuses options the package manager would
// have refused in a PackageInstall.
func (o *Options) normalize() error {
	if o.Root == "" {
		o.Root = DefaultRoot
	}
	o.Root = path.Clean(o.Root)
	if !fs.ValidPath(o.Root) {
		return fmt.Errorf("Options.Root %q: not a valid path within the file system", o.Root)
	}
	src, err := cleanSource(o.Source)
	if err != nil {
		return err
	}
	o.Source = src
	if strings.ContainsAny(o.Image, " \t\r\n") {
		return fmt.Errorf("Options.Image %q: not an image reference", o.Image)
	}
	switch o.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return fmt.Errorf("Options.ImagePullPolicy %q: want Always, IfNotPresent or Never", o.ImagePullPolicy)
	}
	return o.checkNames()
}

// checkNames checks the options that become Kubernetes names and keys.
func (o *Options) checkNames() error {
	if o.Name != "" {
		if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
			return fmt.Errorf("Options.Name %q: %s", o.Name, errs[0])
		}
	}
	for _, s := range o.ImagePullSecrets {
		if errs := validation.IsDNS1123Subdomain(s); len(errs) > 0 {
			return fmt.Errorf("Options.ImagePullSecrets %q: %s", s, errs[0])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.ServiceAccountAnnotations)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("Options.ServiceAccountAnnotations key %q: %s", k, errs[0])
		}
	}
	return nil
}
