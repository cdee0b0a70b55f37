package legacy

import (
	"encoding/json"
	"fmt"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// person is a maintainer or owner in app.yaml.
type person struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// link is an Extensions-era app.yaml link.
type link struct {
	Description string `json:"description,omitempty"`
	URL         string `json:"url,omitempty"`
}

// dependency is one app.yaml dependsOn entry.
type dependency struct {
	CRD string `json:"crd"`
}

// appFile is app.yaml, under the same keys the Package record's spec uses.
// Description and Links are the Extensions design's fields; they are carried
// as they are rather than guessed into their Packages v1 successors (readme,
// website, source). APIVersion is the version of the package format the
// file follows (e.g. 0.1.0), not a Kubernetes API version, so it stays out
// of the record.
type appFile struct {
	APIVersion      string       `json:"apiVersion,omitempty"`
	Title           string       `json:"title,omitempty"`
	OverviewShort   string       `json:"overviewShort,omitempty"`
	Overview        string       `json:"overview,omitempty"`
	Readme          string       `json:"readme,omitempty"`
	Description     string       `json:"description,omitempty"`
	Version         string       `json:"version,omitempty"`
	Maintainers     []person     `json:"maintainers,omitempty"`
	Owners          []person     `json:"owners,omitempty"`
	Company         string       `json:"company,omitempty"`
	Category        string       `json:"category,omitempty"`
	Keywords        []string     `json:"keywords,omitempty"`
	Website         string       `json:"website,omitempty"`
	Source          string       `json:"source,omitempty"`
	Links           []link       `json:"links,omitempty"`
	License         string       `json:"license,omitempty"`
	PackageType     string       `json:"packageType,omitempty"`
	PermissionScope string       `json:"permissionScope,omitempty"`
	DependsOn       []dependency `json:"dependsOn,omitempty"`
}

// knownAppField reports whether key is an app.yaml field of either design.
func knownAppField(key string) bool {
	switch key {
	case "apiVersion", "title", "overviewShort", "overview", "readme", "description",
		"version", "maintainers", "owners", "company", "category", "keywords",
		"website", "source", "links", "license", "packageType", "permissionScope", "dependsOn":
		return true
	}
	return false
}

// parseApp reads and checks app.yaml.
func parseApp(f *file, warn *warnings) (*appFile, error) {
	docs := nonEmpty(splitDocuments(f.data))
	if len(docs) == 0 {
		return nil, fileErr(f.name, "is empty; it must hold the package metadata")
	}
	if len(docs) != 1 {
		return nil, fileErr(f.name, "holds %d YAML documents, want exactly one", len(docs))
	}
	app := &appFile{}
	unknown, err := decodeStruct(docs[0].data, app, knownAppField)
	if err != nil {
		return nil, fileErr(f.name, "%w", err)
	}
	for _, k := range unknown {
		warn.add(f.name, "unknown field %q ignored", k)
	}
	if err := app.check(f.name, warn); err != nil {
		return nil, err
	}
	return app, nil
}

// check enforces the values the design lists as supported. An unknown
// packageType is only a warning, as the design expects the list to grow;
// permissionScope decides what the controller may touch, so it is an error.
func (a *appFile) check(name string, warn *warnings) error {
	switch a.PermissionScope {
	case "", "Cluster", "Namespaced":
	default:
		return fileErr(name, "field \"permissionScope\": %q is not one of Cluster, Namespaced", a.PermissionScope)
	}
	switch a.PackageType {
	case "", "Provider", "Stack", "Application", "Addon":
	default:
		warn.add(name, "packageType %q is not one of Provider, Stack, Application, Addon", a.PackageType)
	}
	for i, d := range a.DependsOn {
		if strings.TrimSpace(d.CRD) == "" {
			return fileErr(name, "field \"dependsOn[%d]\": missing \"crd\"", i)
		}
	}
	if a.Title == "" {
		warn.add(name, "no title; %s is left unset", AnnotationPackageTitle)
	}
	return nil
}

// resolveVersion fills a missing version from the package image's tag, as
// the design says the package manager does; a set version that differs from
// the tag is reported but kept, since the old manager never enforced it.
func (a *appFile) resolveVersion(name, image string, warn *warnings) error {
	tag := imageTag(image)
	if a.Version == "" {
		switch {
		case image == "":
			return fileErr(name, "missing required field \"version\"")
		case tag == "":
			return fileErr(name, "missing required field \"version\" (and image %q has no tag to take it from)", image)
		}
		a.Version = tag
		return nil
	}
	if tag != "" && strings.TrimPrefix(tag, "v") != strings.TrimPrefix(a.Version, "v") {
		warn.add(name, "version %q does not match the tag of image %q", a.Version, image)
	}
	return nil
}

// specFields is the app metadata as the record's spec fields.
func (a *appFile) specFields() (map[string]any, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encoding app metadata: %w", err)
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("encoding app metadata: %w", err)
	}
	delete(m, "apiVersion")
	return m, nil
}

// nonEmpty drops documents that hold nothing but comments and whitespace.
func nonEmpty(docs []document) []document {
	var out []document
	for _, d := range docs {
		if v, err := decodeValue(d.data); err != nil || v != nil {
			out = append(out, d)
		}
	}
	return out
}
