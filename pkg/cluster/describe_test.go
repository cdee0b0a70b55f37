package cluster

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

func eventObject(kind, name, reason string, count int64, first, last time.Time) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{
		"apiVersion":     "v1",
		"kind":           "Event",
		"metadata":       map[string]any{"name": fmt.Sprintf("%s.%s", name, reason), "namespace": EventsNamespace},
		"involvedObject": map[string]any{"kind": kind, "name": name},
		"type":           "Normal",
		"reason":         reason,
		"message":        reason + " happened\n",
		"count":          count,
		"source":         map[string]any{"component": "packages/provider.pkg.crossplane.io"},
		"firstTimestamp": first.UTC().Format(time.RFC3339),
		"lastTimestamp":  last.UTC().Format(time.RFC3339),
	}}
	return u
}

// TestPackageEventsInKubectlsOrder: describe keeps the events of the
// package and its revisions only, oldest first as kubectl describe sorts
// them (by last timestamp), the newest 20, with the source, the count and
// both timestamps kept for kubectl's "AGE (xN over M)".
func TestPackageEventsInKubectlsOrder(t *testing.T) {
	d := &installed.Description{
		Package:   &installed.Package{Kind: "Provider", Name: "provider-nop"},
		Revisions: []*installed.Revision{{Kind: "ProviderRevision", Name: "provider-nop-abc"}},
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	var items []unstructured.Unstructured
	// 25 events of the package, listed newest first; one repeated.
	for i := 24; i >= 0; i-- {
		items = append(items, eventObject("Provider", "provider-nop", fmt.Sprintf("R%02d", i), 1, base.Add(time.Duration(i)*time.Minute), base.Add(time.Duration(i)*time.Minute)))
	}
	items = append(items,
		eventObject("ProviderRevision", "provider-nop-abc", "Repeated", 3, base, base.Add(30*time.Minute)),
		eventObject("Provider", "someone-else", "Other", 1, base, base.Add(40*time.Minute)))
	got := packageEvents(items, d)
	if len(got) != maxEvents {
		t.Fatalf("%d events, want %d", len(got), maxEvents)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Last.Before(got[i-1].Last) {
			t.Errorf("event %d (%s, %s) comes after a later one (%s, %s)", i, got[i].Reason, got[i].Last, got[i-1].Reason, got[i-1].Last)
		}
	}
	if last := got[len(got)-1]; last.Reason != "Repeated" || last.Count != 3 || !last.First.Equal(base) || last.Object != "ProviderRevision/provider-nop-abc" {
		t.Errorf("newest event = %+v, want the revision's repeated one", last)
	}
	if got[0].Reason != "R06" { // R00..R05 are the oldest six of 26: dropped
		t.Errorf("oldest kept = %s, want R06", got[0].Reason)
	}
	for _, e := range got {
		if e.Reason == "Other" {
			t.Error("kept an event of another package")
		}
		if e.From != "packages/provider.pkg.crossplane.io" || e.Message != e.Reason+" happened" {
			t.Errorf("event %s: from %q, message %q", e.Reason, e.From, e.Message)
		}
	}
}
