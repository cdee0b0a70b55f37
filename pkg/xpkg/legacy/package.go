package legacy

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// buildPackage assembles the Package record: app.yaml's metadata as spec
// fields, the package icon, the owned CRDs, the controller from
// install.yaml and the permissions from rbac.yaml.
func buildPackage(t *tree, app *appFile, c *contents, opts *Options, w *warnings) (*unstructured.Unstructured, error) {
	spec, err := app.specFields()
	if err != nil {
		return nil, fileErr(t.app.name, "%w", err)
	}
	if ic := packageIcon(c.icons); ic != nil {
		spec["icons"] = []any{map[string]any{"base64data": ic.base64(), "mediatype": ic.mediaType}}
	}
	if owned := ownedCRDs(c.crds); len(owned) > 0 {
		spec["customresourcedefinitions"] = owned
	}
	var controller map[string]any
	if t.install != nil {
		if controller, err = parseInstall(t.install, opts, w); err != nil {
			return nil, err
		}
	}
	if controller != nil {
		spec["controller"] = controller
		if sa := opts.ServiceAccountAnnotations; len(sa) > 0 {
			spec["serviceAccount"] = map[string]any{"annotations": stringsToAny(sa)}
		}
	} else {
		warnNoController(opts, w)
	}
	if t.rbac != nil {
		perms, err := parseRBAC(t.rbac)
		if err != nil {
			return nil, err
		}
		if perms != nil {
			spec["permissions"] = perms
		}
	}
	meta := map[string]any{}
	if name := packageName(opts, controller, w); name != "" {
		meta["name"] = name
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": PackageAPIVersion,
		"kind":       PackageKind,
		"metadata":   meta,
		"spec":       spec,
	}}, nil
}

// ownedCRDs lists every version of every CRD as {kind, apiVersion}, the
// shape of the design's spec.customresourcedefinitions.
func ownedCRDs(crds []*crd) []any {
	var out []any
	for _, c := range crds {
		for _, v := range c.versions {
			out = append(out, map[string]any{"kind": c.kind, "apiVersion": c.group + "/" + v})
		}
	}
	return out
}

// packageName picks the record's name: Options.Name, else the package
// image's repository name, else the controller Deployment's name. A derived
// name that is not a valid Kubernetes name is skipped.
func packageName(opts *Options, controller map[string]any, w *warnings) string {
	if opts.Name != "" {
		return opts.Name
	}
	var candidates []string
	if opts.Image != "" {
		candidates = append(candidates, imageBaseName(opts.Image))
	}
	if d, ok := controller["deployment"].(map[string]any); ok {
		if n, ok := d["name"].(string); ok {
			candidates = append(candidates, n)
		}
	}
	for _, n := range candidates {
		if len(validation.IsDNS1123Subdomain(n)) == 0 {
			return n
		}
	}
	w.add(opts.Root, "the Package record has no metadata.name: set Options.Name")
	return ""
}

// warnNoController reports PackageInstall settings that only apply to a
// controller when the package has none.
func warnNoController(opts *Options, w *warnings) {
	var unused []string
	if opts.ImagePullPolicy != "" {
		unused = append(unused, "ImagePullPolicy")
	}
	if len(opts.ImagePullSecrets) > 0 {
		unused = append(unused, "ImagePullSecrets")
	}
	if len(opts.ServiceAccountAnnotations) > 0 {
		unused = append(unused, "ServiceAccountAnnotations")
	}
	for _, name := range unused {
		w.add(opts.Root, "the package has no install.yaml controller; Options.%s is unused", name)
	}
}

func stringsToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
