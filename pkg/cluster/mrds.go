package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

var (
	mrdGVR  = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourcedefinitions"}
	mrapGVR = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourceactivationpolicies"}
)

// listPage is how many rows one request of a table list asks for.
const listPage = 500

// MRDs reads the state of the named ManagedResourceDefinitions, in the
// order given. The cluster's MRDs are read as a server-side table (NAME,
// STATE, ESTABLISHED: what kubectl get shows), a page of 500 at a time:
// an installed.MRD holds its CRD's whole schema, and a big provider has 2,000 of
// them. Names the cluster does not hold are left out.
func (c *Cluster) MRDs(ctx context.Context, names []string) ([]installed.MRD, error) {
	if len(names) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	found := map[string]installed.MRD{}
	keep := func(m installed.MRD) {
		if want[m.Name] {
			found[m.Name] = m
		}
	}
	var err error
	if c.rest != nil {
		err = c.mrdTable(ctx, keep)
	} else {
		err = c.mrdList(ctx, keep)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list ManagedResourceDefinitions: %w", err)
	}
	out := make([]installed.MRD, 0, len(found))
	for _, n := range names {
		if m, ok := found[n]; ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// mrdList reads MRDs whole, page by page (a cluster without a REST
// configuration: tests over a fake client).
func (c *Cluster) mrdList(ctx context.Context, keep func(installed.MRD)) error {
	opts := metav1.ListOptions{Limit: listPage}
	for {
		l, err := c.dyn.Resource(mrdGVR).List(ctx, opts)
		if err != nil {
			return err
		}
		for i := range l.Items {
			u := &l.Items[i]
			m := installed.MRD{Name: u.GetName()}
			m.State, _, _ = unstructured.NestedString(u.Object, "spec", "state")
			for _, cond := range installed.ReadConditions(u) {
				if cond.Type == "Established" {
					m.Established = cond.Status
				}
			}
			keep(m)
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

// mrdTable reads MRDs as server-side table rows.
func (c *Cluster) mrdTable(ctx context.Context, keep func(installed.MRD)) error {
	hc, err := rest.HTTPClientFor(c.rest)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(c.rest.Host, "/") + "/apis/" + mrdGVR.GroupVersion().String() + "/" + mrdGVR.Resource
	cont := ""
	for {
		q := url.Values{"limit": {fmt.Sprint(listPage)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		t, err := getTable(ctx, hc, base+"?"+q.Encode())
		if err != nil {
			return err
		}
		col := func(name string) int {
			return slices.IndexFunc(t.ColumnDefinitions, func(d metav1.TableColumnDefinition) bool { return strings.EqualFold(d.Name, name) })
		}
		iName, iState, iEst := col("name"), col("state"), col("established")
		for _, row := range t.Rows {
			cell := func(i int) string {
				if i < 0 || i >= len(row.Cells) {
					return ""
				}
				s, _ := row.Cells[i].(string)
				return s
			}
			keep(installed.MRD{Name: cell(iName), State: cell(iState), Established: cell(iEst)})
		}
		if cont = t.Continue; cont == "" {
			return nil
		}
	}
}

// getTable GETs a list as a meta.k8s.io Table (without the objects).
func getTable(ctx context.Context, hc *http.Client, u string) (*metav1.Table, error) {
	body, err := getRaw(ctx, hc, u+"&includeObject=None", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if err != nil {
		return nil, err
	}
	var t metav1.Table
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, fmt.Errorf("read the table of %s: %w", u, err)
	}
	return &t, nil
}

// getRaw GETs an API path with client-go's HTTP client (its credentials
// and request logging) but not its REST client, which at -v=8 and above
// logs response bodies: what getRaw reads is not logged.
func getRaw(ctx context.Context, hc *http.Client, u, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
			return nil, &apierrors.StatusError{ErrStatus: st}
		}
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// MRAPs reads the ManagedResourceActivationPolicies (a cluster without
// them, before Crossplane v2, has none).
func (c *Cluster) MRAPs(ctx context.Context) ([]installed.MRAP, error) {
	l, err := c.dyn.Resource(mrapGVR).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list ManagedResourceActivationPolicies: %w", err)
	}
	out := make([]installed.MRAP, 0, len(l.Items))
	for i := range l.Items {
		u := &l.Items[i]
		m := installed.MRAP{Name: u.GetName()}
		m.Activate, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "activate")
		m.Activated, _, _ = unstructured.NestedStringSlice(u.Object, "status", "activated")
		out = append(out, m)
	}
	return out, nil
}
