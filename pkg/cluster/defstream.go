package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// definitionDoc is what the plugin reads of a definition (a CRD, an MRD or
// an XRD): names, owners, versions, state and conditions, never the
// schemas, which are nearly all of a big provider's 100 MB of definitions.
// It is decoded one object at a time from a list or watch stream.
type definitionDoc struct {
	Metadata struct {
		Name            string                  `json:"name"`
		UID             string                  `json:"uid,omitempty"`
		ResourceVersion string                  `json:"resourceVersion,omitempty"`
		Generation      int64                   `json:"generation,omitempty"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences,omitempty"`
		// DeletionTimestamp and Finalizers: whether the definition is
		// being deleted, and what holds it.
		DeletionTimestamp *metav1.Time `json:"deletionTimestamp,omitempty"`
		Finalizers        []string     `json:"finalizers,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group,omitempty"`
		Scope string `json:"scope,omitempty"`
		// State is an MRD's Active or Inactive.
		State string `json:"state,omitempty"`
		Names struct {
			Kind   string `json:"kind,omitempty"`
			Plural string `json:"plural,omitempty"`
		} `json:"names"`
		// ClaimNames is an XRD's claim, when it offers one.
		ClaimNames *struct {
			Plural string `json:"plural,omitempty"`
		} `json:"claimNames,omitempty"`
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
		} `json:"versions,omitempty"`
	} `json:"spec"`
	Status struct {
		StoredVersions []string         `json:"storedVersions,omitempty"`
		Conditions     []conditionField `json:"conditions,omitempty"`
	} `json:"status"`
}

// conditionField is a status condition as the API serves it.
type conditionField struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
}

func (d *definitionDoc) conditions() []installed.Condition {
	out := make([]installed.Condition, len(d.Status.Conditions))
	for i, c := range d.Status.Conditions {
		out[i] = installed.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration}
	}
	return out
}

// definitionPage is how many definitions one list request asks for: a
// page of big CRDs is tens of megabytes on the wire, read as a stream.
const definitionPage = 500

// definitionSource lists and watches definitions of one resource: over
// plain HTTP against an API server, or through the dynamic client (a
// cluster without a REST configuration: tests over a fake client).
type definitionSource interface {
	// list calls each for every object, page by page, and returns the
	// list's resourceVersion, from which a watch can go on.
	list(ctx context.Context, gvr schema.GroupVersionResource, each func(*definitionDoc)) (string, error)
	// watch calls each for every event after resourceVersion until the
	// watch ends (nil: the server closed it, so list again) or fails.
	watch(ctx context.Context, gvr schema.GroupVersionResource, resourceVersion string, each func(watch.EventType, *definitionDoc)) error
}

func (c *Cluster) definitions() (definitionSource, error) {
	if c.rest == nil {
		return dynDefinitions{c.dyn}, nil
	}
	return c.httpReader()
}

// httpReader reads from the API server with client-go's HTTP client (its
// credentials and -v=6 request log), handing the warnings the server
// sends to the configuration's handler, as client-go's REST client does
// (client-go's default logs them).
func (c *Cluster) httpReader() (*httpDefinitions, error) {
	hc, err := rest.HTTPClientFor(c.rest)
	if err != nil {
		return nil, err
	}
	warn := c.rest.WarningHandler
	if warn == nil {
		warn = rest.WarningLogger{}
	}
	return &httpDefinitions{hc: hc, host: strings.TrimSuffix(c.rest.Host, "/"), warn: warn}, nil
}

// httpDefinitions reads definitions with client-go's HTTP client (its
// credentials and -v=6 request log) but not its REST client, which would
// decode every schema into maps and, at -v=8, log bodies of 100 MB.
type httpDefinitions struct {
	hc   *http.Client
	host string
	warn rest.WarningHandler
}

func resourcePath(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return "/api/" + gvr.Version + "/" + gvr.Resource
	}
	return "/apis/" + gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
}

func (h *httpDefinitions) list(ctx context.Context, gvr schema.GroupVersionResource, each func(*definitionDoc)) (string, error) {
	return streamList(ctx, h, gvr, each)
}

// streamList reads every object of gvr as a T, page by page, each page
// decoded one object at a time, and returns the list's resourceVersion.
func streamList[T any](ctx context.Context, h *httpDefinitions, gvr schema.GroupVersionResource, each func(*T)) (string, error) {
	cont := ""
	for {
		q := url.Values{"limit": {strconv.Itoa(definitionPage)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		body, err := h.get(ctx, resourcePath(gvr)+"?"+q.Encode())
		if err != nil {
			if cont != "" && apierrors.IsResourceExpired(err) {
				cont = "" // the snapshot expired between pages: start again
				continue
			}
			return "", err
		}
		meta, err := decodeList(body, each)
		body.Close()
		if err != nil {
			return "", fmt.Errorf("read the list of %s: %w", gvr.GroupResource(), err)
		}
		if cont = meta.Continue; cont == "" {
			return meta.ResourceVersion, nil
		}
	}
}

func (h *httpDefinitions) watch(ctx context.Context, gvr schema.GroupVersionResource, rv string, each func(watch.EventType, *definitionDoc)) error {
	q := url.Values{"watch": {"1"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"}}
	body, err := h.get(ctx, resourcePath(gvr)+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer body.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(body, 64<<10))
	for {
		var ev struct {
			Type   watch.EventType `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return ctx.Err()
			}
			return nil // the connection ended mid-event: list again
		}
		switch ev.Type {
		case watch.Error:
			var st metav1.Status
			_ = json.Unmarshal(ev.Object, &st)
			return &apierrors.StatusError{ErrStatus: st}
		case watch.Bookmark:
			continue
		}
		var d definitionDoc
		if err := json.Unmarshal(ev.Object, &d); err != nil {
			return fmt.Errorf("read a watch event of %s: %w", gvr.GroupResource(), err)
		}
		each(ev.Type, &d)
	}
}

// get sends a GET and returns the body of a 200 response; an API error
// becomes a StatusError. The server's flow control answers 429 when it is
// busy: the request is sent again when it says, as client-go would.
func (h *httpDefinitions) get(ctx context.Context, path string) (io.ReadCloser, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.host+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := h.hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusOK {
			if h.warn != nil {
				warnings, _ := utilnet.ParseWarningHeaders(resp.Header.Values("Warning"))
				for _, w := range warnings {
					h.warn.HandleWarningHeader(w.Code, w.Agent, w.Text)
				}
			}
			return resp.Body, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if wait, ok := retryAfter(resp); ok && attempt < 10 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
				continue
			}
		}
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
			return nil, &apierrors.StatusError{ErrStatus: st}
		}
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
}

// retryAfter is how long a 429 (or a 5xx with Retry-After) asks to wait.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	s, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil {
		if resp.StatusCode != http.StatusTooManyRequests {
			return 0, false
		}
		s = 1
	}
	return time.Duration(min(max(s, 1), 10)) * time.Second, true
}

// decodeList reads a list response object by object: only one item (a
// CRD of up to a few hundred kilobytes) is in memory at a time.
func decodeList[T any](r io.Reader, each func(*T)) (metav1.ListMeta, error) {
	var meta metav1.ListMeta
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	if err := expectDelim(dec, '{'); err != nil {
		return meta, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return meta, err
		}
		switch t {
		case "metadata":
			err = dec.Decode(&meta)
		case "items":
			err = decodeItems(dec, each)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return meta, err
		}
	}
	return meta, expectDelim(dec, '}')
}

func decodeItems[T any](dec *json.Decoder, each func(*T)) error {
	t, err := dec.Token()
	if err != nil || t == nil { // "items": null
		return err
	}
	if t != json.Delim('[') {
		return fmt.Errorf("items: want an array, got %v", t)
	}
	for dec.More() {
		var d T
		if err := dec.Decode(&d); err != nil {
			return err
		}
		each(&d)
	}
	return expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != want {
		return fmt.Errorf("want %v, got %v", want, t)
	}
	return nil
}

// dynDefinitions reads definitions through the dynamic client.
type dynDefinitions struct{ dyn dynamic.Interface }

func (d dynDefinitions) list(ctx context.Context, gvr schema.GroupVersionResource, each func(*definitionDoc)) (string, error) {
	opts := metav1.ListOptions{Limit: definitionPage}
	for {
		l, err := d.dyn.Resource(gvr).List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			doc, err := toDefinition(&l.Items[i])
			if err != nil {
				return "", err
			}
			each(doc)
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return l.GetResourceVersion(), nil
		}
	}
}

func (d dynDefinitions) watch(ctx context.Context, gvr schema.GroupVersionResource, rv string, each func(watch.EventType, *definitionDoc)) error {
	w, err := d.dyn.Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if ev.Type == watch.Error {
				return apierrors.FromObject(ev.Object)
			}
			u, isU := ev.Object.(*unstructured.Unstructured)
			if !isU || ev.Type == watch.Bookmark {
				continue
			}
			doc, err := toDefinition(u)
			if err != nil {
				return err
			}
			each(ev.Type, doc)
		}
	}
}

func toDefinition(u *unstructured.Unstructured) (*definitionDoc, error) {
	var d definitionDoc
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
		return nil, fmt.Errorf("read %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return &d, nil
}
