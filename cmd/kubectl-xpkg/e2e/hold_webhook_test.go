package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var webhooksGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}

// holdWebhook is a validating webhook, served by the test, that holds one
// request of those its rule matches: the at-th (dry runs not counted).
// It closes held when that request comes, and answers it, refused, once
// the API server gives up on it (its client went away) or after 10s: the
// write it holds never lands. It allows every other request.
type holdWebhook struct {
	held chan struct{}
	at   int
	// remove deletes the registration; the server answers until the
	// test ends, since the API server may call it a moment longer.
	remove func()

	mu      sync.Mutex
	seen    int
	dryRuns int
}

// holdAt registers a webhook for operation (CREATE, UPDATE, DELETE) on
// res that holds the at-th such request; it waits until the API server
// calls it (probe sends a dry-run request it matches). Its clean-up
// removes the registration, then stops the server.
func (c cluster) holdAt(t *testing.T, res schema.GroupVersionResource, operation string, at int, probe func() error) *holdWebhook {
	t.Helper()
	h := &holdWebhook{held: make(chan struct{}), at: at}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		req := review.Request
		review.Response = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
		review.Request = nil
		if h.hold(req) {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			review.Response.Allowed = false
			review.Response.Result = &metav1.Status{Message: "held by the test", Code: http.StatusForbidden}
		}
		_ = json.NewEncoder(w).Encode(review)
	}))
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	name := "e2e-hold-" + res.Resource
	none, fail, timeout := "None", "Fail", int64(15)
	cfg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": name},
		"webhooks": []any{map[string]any{
			"name":                    "hold.e2e.example.org",
			"clientConfig":            map[string]any{"url": srv.URL + "/hold", "caBundle": base64.StdEncoding.EncodeToString(ca)},
			"rules":                   []any{map[string]any{"apiGroups": []any{res.Group}, "apiVersions": []any{res.Version}, "operations": []any{operation}, "resources": []any{res.Resource}, "scope": "*"}},
			"sideEffects":             none,
			"failurePolicy":           fail,
			"timeoutSeconds":          timeout,
			"admissionReviewVersions": []any{"v1"},
		}},
	}}
	if _, err := c.dyn.Resource(webhooksGVR).Create(context.Background(), cfg, metav1.CreateOptions{}); err != nil {
		srv.Close()
		t.Fatalf("register the webhook %s: %v", name, err)
	}
	h.remove = func() {
		if err := c.dyn.Resource(webhooksGVR).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the webhook %s: %v", name, err)
		}
	}
	t.Cleanup(func() {
		h.remove()
		srv.Close()
	})
	if err := waitFor(time.Minute, func() error {
		if err := probe(); err != nil {
			return err
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.dryRuns == 0 {
			return fmt.Errorf("the API server has not called the webhook %s yet", name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

// hold counts req and says whether it is the one to hold.
func (h *holdWebhook) hold(req *admissionv1.AdmissionRequest) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.DryRun != nil && *req.DryRun {
		h.dryRuns++
		return false
	}
	h.seen++
	if h.seen == h.at {
		close(h.held)
		return true
	}
	return false
}
