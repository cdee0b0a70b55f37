package cluster

import (
	"context"
	"fmt"
	"io"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// listObjects lists kind's objects that match selector in one request,
// as the dynamic client would, but decodes the answer once, straight
// into the maps of unstructured objects (integers as int64, as
// unstructured keeps them). The dynamic client's decoder reads the body
// four times over (its apiVersion and kind, the list, each item, each
// item's validity): three times the CPU for the same objects, which a
// get across twenty clusters pays twenty times. A cluster without a REST
// configuration (a fake client) lists through the dynamic client.
func (c *Cluster) listObjects(ctx context.Context, kind, selector string) ([]unstructured.Unstructured, error) {
	gvr, err := c.dialect.Resource(kind)
	if err != nil {
		return nil, err
	}
	ns := ""
	if c.dialect.Namespaced(kind) {
		ns = c.namespace
	}
	if c.rest == nil {
		rc := c.dyn.Resource(gvr)
		var l *unstructured.UnstructuredList
		if ns != "" {
			l, err = rc.Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		} else {
			l, err = rc.List(ctx, metav1.ListOptions{LabelSelector: selector})
		}
		if err != nil {
			return nil, err
		}
		return l.Items, nil
	}
	path := objectsPath(gvr, ns)
	if selector != "" {
		path += "?" + url.Values{"labelSelector": {selector}}.Encode()
	}
	var l struct {
		Items []map[string]any `json:"items"`
	}
	if err := c.readOnce(ctx, path, &l); err != nil {
		return nil, err
	}
	out := make([]unstructured.Unstructured, len(l.Items))
	for i, o := range l.Items {
		out[i].Object = o
	}
	return out, nil
}

// getObject reads the object name of gvr (cluster-scoped) as the dynamic
// client's Get would, decoded once as listObjects decodes lists.
func (c *Cluster) getObject(ctx context.Context, gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
	if c.rest == nil {
		return c.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	}
	u := &unstructured.Unstructured{}
	if err := c.readOnce(ctx, resourcePath(gvr)+"/"+url.PathEscape(name), &u.Object); err != nil {
		return nil, err
	}
	return u, nil
}

// readOnce GETs path with client-go's HTTP client (its credentials, its
// request log, the server's warnings to their handler) and decodes the
// answer into v in one pass; an API error is the StatusError the dynamic
// client would return.
func (c *Cluster) readOnce(ctx context.Context, path string, v any) error {
	h, err := c.httpReader()
	if err != nil {
		return err
	}
	body, err := h.get(ctx, path)
	if err != nil {
		return err
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// objectsPath is the path of gvr's objects, in namespace ns ("" for a
// cluster-scoped resource or every namespace).
func objectsPath(gvr schema.GroupVersionResource, ns string) string {
	if ns == "" {
		return resourcePath(gvr)
	}
	prefix := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		prefix = "/api/" + gvr.Version
	}
	return prefix + "/namespaces/" + ns + "/" + gvr.Resource
}
