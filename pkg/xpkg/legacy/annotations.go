package legacy

// annotator applies the package's metadata to its CRDs.
type annotator struct {
	index *index
	title string // app.yaml title, for package-title
	warn  *warnings
}

// annotate labels one CRD as managed by the package manager and sets the
// annotations of the design's table from the metadata files that apply to
// it. Labels and annotations already in the CRD are preserved; where a file
// supplies a key the CRD was pre-annotated with, the file wins (and a
// differing value is reported), except ui-schema, which is appended to.
func (a *annotator) annotate(c *crd) error {
	labels, err := stringMap(c.meta["labels"], "metadata.labels")
	if err != nil {
		return c.err("%w", err)
	}
	a.set(c, labels, LabelManagedBy, LabelValuePackageManager)
	ann, err := stringMap(c.meta["annotations"], "metadata.annotations")
	if err != nil {
		return c.err("%w", err)
	}
	a.set(c, ann, AnnotationPackageTitle, a.title)
	if g := a.index.groupFor(c); g != nil {
		a.setAll(c, ann, g.annotations())
	}
	if r := a.index.resourceFor(c); r != nil {
		a.setAll(c, ann, r.annotations())
	}
	if ic := a.index.iconFor(c); ic != nil {
		a.set(c, ann, AnnotationIconDataURI, ic.dataURI())
	}
	ui, err := concatUISchemas(c, ann[AnnotationUISchema], a.index.uiSchemasFor(c))
	if err != nil {
		return err
	}
	if ui != "" {
		ann[AnnotationUISchema] = ui
	}
	if err := checkAnnotationSize(c, ann); err != nil {
		return err
	}
	a.index.markInScope(c)
	c.obj.SetLabels(labels)
	c.obj.SetAnnotations(ann)
	return nil
}

// setAll sets each non-empty value.
func (a *annotator) setAll(c *crd, m map[string]string, list []annotation) {
	for _, an := range list {
		a.set(c, m, an.key, an.value)
	}
}

// set sets key to a non-empty value, reporting a different value it
// replaces. An empty or absent metadata value sets nothing rather than an
// empty annotation.
func (a *annotator) set(c *crd, m map[string]string, key, value string) {
	if value == "" {
		return
	}
	if old, ok := m[key]; ok && old != value {
		a.warn.add(c.where(), "%s: value in the CustomResourceDefinition replaced by the package's metadata", key)
	}
	m[key] = value
}

// checkAnnotationSize refuses a CRD whose annotations Kubernetes would
// reject, which a large icon or ui-schema can cause.
func checkAnnotationSize(c *crd, ann map[string]string) error {
	total := 0
	for k, v := range ann {
		total += len(k) + len(v)
	}
	if total > maxAnnotationBytes {
		return c.err("%w", tooLarge("CustomResourceDefinition %q would carry %d bytes of annotations, over the %d bytes Kubernetes allows (is an icon or ui-schema too large?)", c.name, total, maxAnnotationBytes))
	}
	return nil
}
