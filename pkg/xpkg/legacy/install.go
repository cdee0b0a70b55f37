package legacy

import (
	"fmt"
	"strings"
)

// parseInstall turns install.yaml, a single Deployment, into the record's
// spec.controller: {deployment: {name, spec}}, as in the design's Package
// example. The Deployment's images are completed and qualified the way the
// package manager did with the PackageInstall's settings (see setImages).
// An empty install.yaml counts as absent: install.yaml is optional.
func parseInstall(f *file, opts *Options, warn *warnings) (map[string]any, error) {
	docs := nonEmpty(splitDocuments(f.data))
	switch len(docs) {
	case 0:
		warn.add(f.name, "empty; the package has no controller")
		return nil, nil
	case 1:
	default:
		return nil, fileErr(f.name, "holds %d YAML documents; want a single Deployment", len(docs))
	}
	m, err := decodeMap(docs[0].data)
	if err != nil {
		return nil, fileErr(f.name, "%w", err)
	}
	if err := checkDeployment(m); err != nil {
		return nil, fileErr(f.name, "%w", err)
	}
	name, err := requiredString(m, "metadata", "name")
	if err != nil {
		return nil, fileErr(f.name, "%w", err)
	}
	spec, _ := m["spec"].(map[string]any)
	if spec == nil {
		return nil, fileErr(f.name, "missing required field \"spec\"")
	}
	if err := completePodSpec(spec, opts, f.name, warn); err != nil {
		return nil, fileErr(f.name, "%w", err)
	}
	return map[string]any{"deployment": map[string]any{"name": name, "spec": spec}}, nil
}

// checkDeployment accepts a Deployment of any apps (or old extensions) API
// version. The design supports only Deployment-based controllers.
func checkDeployment(m map[string]any) error {
	kind, _ := m["kind"].(string)
	if kind != "Deployment" {
		if kind == "" {
			kind = "none"
		}
		return fmt.Errorf("not a Deployment (kind %s); install.yaml must describe a single Deployment", kind)
	}
	av, _ := m["apiVersion"].(string)
	group, _, _ := strings.Cut(av, "/")
	if (group != "apps" && group != "extensions") || !strings.Contains(av, "/") {
		return fmt.Errorf("Deployment has apiVersion %q; want apps/v1", av)
	}
	return nil
}

// completePodSpec applies the PackageInstall settings to the pod template.
func completePodSpec(spec map[string]any, opts *Options, name string, warn *warnings) error {
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	if pod == nil {
		return fmt.Errorf("missing required field \"spec.template.spec\"")
	}
	containers, _ := pod["containers"].([]any)
	if len(containers) == 0 {
		return fmt.Errorf("spec.template.spec.containers: want a non-empty list")
	}
	for _, field := range []string{"initContainers", "containers"} {
		list, ok := pod[field].([]any)
		if !ok && pod[field] != nil {
			return fmt.Errorf("spec.template.spec.%s: want a list", field)
		}
		for i, c := range list {
			cm, ok := c.(map[string]any)
			if !ok {
				return fmt.Errorf("spec.template.spec.%s[%d]: want a mapping", field, i)
			}
			if err := setImage(cm, opts, fmt.Sprintf("%s[%d]", field, i), name, warn); err != nil {
				return err
			}
		}
	}
	return addPullSecrets(pod, opts.ImagePullSecrets)
}

// setImage completes one container's image. A container without an image
// gets the package image (Options.Image), as the design says the package
// manager fills it in; then an image naming no registry is prefixed with
// Options.Source, and one that names a registry is left alone. The
// PackageInstall's imagePullPolicy, when given, replaces the container's.
func setImage(c map[string]any, opts *Options, where, name string, warn *warnings) error {
	image, ok := c["image"].(string)
	if !ok && c["image"] != nil {
		return fmt.Errorf("spec.template.spec.%s.image: want a string", where)
	}
	if opts.ImagePullPolicy != "" {
		c["imagePullPolicy"] = opts.ImagePullPolicy
	}
	if image == "" {
		image = opts.Image
	}
	if image == "" {
		warn.add(name, "%s has no image and no package image was given to fill it in", where)
		return nil
	}
	c["image"] = withSource(image, opts.Source)
	return nil
}

// addPullSecrets appends the PackageInstall's imagePullSecrets that the pod
// does not list yet.
func addPullSecrets(pod map[string]any, names []string) error {
	if len(names) == 0 {
		return nil
	}
	list, ok := pod["imagePullSecrets"].([]any)
	if !ok && pod["imagePullSecrets"] != nil {
		return fmt.Errorf("spec.template.spec.imagePullSecrets: want a list")
	}
	have := map[string]bool{}
	for _, s := range list {
		if m, ok := s.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				have[n] = true
			}
		}
	}
	for _, n := range names {
		if !have[n] {
			list = append(list, map[string]any{"name": n})
			have[n] = true
		}
	}
	pod["imagePullSecrets"] = list
	return nil
}
