package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// waitEstablishedFor bounds the wait for the CRDs the benchmark created.
const waitEstablishedFor = 30 * time.Minute

// establishedWatch notes when each CRD of a set became Established. It
// reads the watch stream into a small struct rather than whole objects:
// decoding thousands of 50 KB CRDs into maps would take the CPU the
// plugin under measurement needs, and put the times late. A time is when
// the watch saw the condition, or the condition's lastTransitionTime plus
// its resolution (1 s) when the watch fell further behind than that.
type establishedWatch struct {
	mu      sync.Mutex
	at      map[string]time.Time
	changed chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

// watchEvent is what the watch reads of an event.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status struct {
			Conditions []struct {
				Type               string    `json:"type"`
				Status             string    `json:"status"`
				LastTransitionTime time.Time `json:"lastTransitionTime"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"object"`
}

// watchEstablished watches the CRDs labelled with set until stop.
func watchEstablished(env *testenv.Env, set string) (*establishedWatch, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: env.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: testenv.ContextAdmin}).ClientConfig()
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &establishedWatch{at: map[string]time.Time{}, changed: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	q := url.Values{"watch": {"true"}, "labelSelector": {benchSetLabel + "=" + set}}
	go func() {
		defer close(w.done)
		for rv := ""; ctx.Err() == nil; {
			rv = w.follow(ctx, hc, cfg.Host+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", q, rv)
		}
	}()
	return w, nil
}

func (w *establishedWatch) stop() {
	w.cancel()
	<-w.done
}

// follow reads one watch from resourceVersion rv ("": every CRD first,
// then changes) until it ends, and returns where to go on from.
func (w *establishedWatch) follow(ctx context.Context, hc *http.Client, u string, q url.Values, rv string) string {
	q.Set("resourceVersion", rv)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"?"+q.Encode(), nil)
	if err != nil {
		return rv
	}
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		if err == nil {
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
		return ""
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			return rv
		}
		if ev.Type == "ERROR" { // the version is gone: start again from now
			return ""
		}
		rv = ev.Object.Metadata.ResourceVersion
		w.see(&ev, time.Now())
	}
}

func (w *establishedWatch) see(ev *watchEvent, now time.Time) {
	for _, c := range ev.Object.Status.Conditions {
		if c.Type != "Established" || c.Status != "True" {
			continue
		}
		at := now
		if bound := c.LastTransitionTime.Add(time.Second); bound.Before(at) {
			at = bound
		}
		w.mu.Lock()
		if _, seen := w.at[ev.Object.Metadata.Name]; !seen {
			w.at[ev.Object.Metadata.Name] = at
		}
		w.mu.Unlock()
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
}

// wait waits until every named CRD has been seen Established and returns
// when the last of them was.
func (w *establishedWatch) wait(ctx context.Context, names []string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, waitEstablishedFor)
	defer cancel()
	for {
		var last time.Time
		pending := 0
		w.mu.Lock()
		for _, n := range names {
			at, ok := w.at[n]
			if !ok {
				pending++
			}
			if at.After(last) {
				last = at
			}
		}
		w.mu.Unlock()
		if pending == 0 {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%d of %d CRDs not established after %s", pending, len(names), waitEstablishedFor)
		case <-w.changed:
		}
	}
}
