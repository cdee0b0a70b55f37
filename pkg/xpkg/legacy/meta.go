package legacy

// groupMeta is a group.yaml: metadata for every CRD at or below its
// directory. Group and Category are read (the design's example has group)
// but annotate nothing: the annotation table has no key for them.
type groupMeta struct {
	f             *file
	Group         string `json:"group,omitempty"`
	Title         string `json:"title,omitempty"`
	OverviewShort string `json:"overviewShort,omitempty"`
	Overview      string `json:"overview,omitempty"`
	Readme        string `json:"readme,omitempty"`
	Category      string `json:"category,omitempty"`
}

func knownGroupField(key string) bool {
	switch key {
	case "group", "title", "overviewShort", "overview", "readme", "category":
		return true
	}
	return false
}

// resourceMeta is a *resource.yaml: metadata for the CRD whose kind equals
// its id. The annotation table reads the short overview from
// "shortOverview" while the design's example resource.yaml writes
// "overviewShort", as group.yaml and app.yaml do; the example's key is the
// one read, the table's is accepted when it is the only one set.
type resourceMeta struct {
	f             *file
	ID            string `json:"id,omitempty"`
	Title         string `json:"title,omitempty"`
	TitlePlural   string `json:"titlePlural,omitempty"`
	Category      string `json:"category,omitempty"`
	OverviewShort string `json:"overviewShort,omitempty"`
	ShortOverview string `json:"shortOverview,omitempty"`
	Overview      string `json:"overview,omitempty"`
	Readme        string `json:"readme,omitempty"`
}

func knownResourceField(key string) bool {
	switch key {
	case "id", "title", "titlePlural", "category", "overviewShort", "shortOverview", "overview", "readme":
		return true
	}
	return false
}

// parseGroup reads a group.yaml.
func parseGroup(f *file, warn *warnings) (*groupMeta, error) {
	g := &groupMeta{f: f}
	if err := decodeMeta(f, g, knownGroupField, warn); err != nil {
		return nil, err
	}
	return g, nil
}

// parseResource reads a *resource.yaml. Without an id it cannot be matched
// to a CRD, which the design requires of it, so it is reported and dropped.
func parseResource(f *file, warn *warnings) (*resourceMeta, error) {
	r := &resourceMeta{f: f}
	if err := decodeMeta(f, r, knownResourceField, warn); err != nil {
		return nil, err
	}
	if r.ID == "" {
		warn.add(f.name, "no id naming the kind of its CustomResourceDefinition; ignored")
		return nil, nil
	}
	if r.OverviewShort == "" {
		r.OverviewShort = r.ShortOverview
	} else if r.ShortOverview != "" && r.ShortOverview != r.OverviewShort {
		warn.add(f.name, "both overviewShort and shortOverview are set; overviewShort is used")
	}
	return r, nil
}

// decodeMeta decodes a single-document metadata file into v.
func decodeMeta(f *file, v any, known func(string) bool, warn *warnings) error {
	docs := nonEmpty(splitDocuments(f.data))
	if len(docs) > 1 {
		return fileErr(f.name, "holds %d YAML documents, want one", len(docs))
	}
	if len(docs) == 0 {
		warn.add(f.name, "empty")
		return nil
	}
	unknown, err := decodeStruct(docs[0].data, v, known)
	if err != nil {
		return fileErr(f.name, "%w", err)
	}
	for _, k := range unknown {
		warn.add(f.name, "unknown field %q ignored", k)
	}
	return nil
}

// annotations are the group's annotations, by the table.
func (g *groupMeta) annotations() []annotation {
	return []annotation{
		{AnnotationGroupTitle, g.Title},
		{AnnotationGroupOverview, g.Overview},
		{AnnotationGroupOverviewShort, g.OverviewShort},
		{AnnotationGroupReadme, g.Readme},
	}
}

// annotations are the resource's annotations, by the table.
func (r *resourceMeta) annotations() []annotation {
	return []annotation{
		{AnnotationResourceCategory, r.Category},
		{AnnotationResourceTitle, r.Title},
		{AnnotationResourceTitlePlural, r.TitlePlural},
		{AnnotationResourceOverview, r.Overview},
		{AnnotationResourceOverviewShort, r.OverviewShort},
		{AnnotationResourceReadme, r.Readme},
	}
}

// annotation is one key and value to set on a CRD.
type annotation struct{ key, value string }
