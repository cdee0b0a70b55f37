package cluster

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSharedDiscoveryOncePerServer: contexts of one API server discover
// once between them, each server apart; a discovery that fails is not
// handed on, each context that waited on it discovers for itself.
func TestSharedDiscoveryOncePerServer(t *testing.T) {
	s := &SharedDiscovery{}
	var calls atomic.Int32
	served := []ServedAPI{{Generation: Generations[0], PreferredVersion: "v1"}}
	discover := func() ([]ServedAPI, error) {
		calls.Add(1)
		return served, nil
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if got, err := s.apis("https://a", discover); err != nil || len(got) != 1 {
				t.Errorf("apis = %v, %v", got, err)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("20 contexts of one server discovered %d times, want once", n)
	}
	if _, err := s.apis("https://b", discover); err != nil || calls.Load() != 2 {
		t.Errorf("another server: %v, %d discoveries in all, want 2", err, calls.Load())
	}

	failing := &SharedDiscovery{}
	var tries atomic.Int32
	refused := errors.New("unauthorized")
	if _, err := failing.apis("https://c", func() ([]ServedAPI, error) { tries.Add(1); return nil, refused }); !errors.Is(err, refused) {
		t.Errorf("the first context's failure = %v", err)
	}
	if got, err := failing.apis("https://c", func() ([]ServedAPI, error) { tries.Add(1); return served, nil }); err != nil || len(got) != 1 {
		t.Errorf("a context after a failed discovery: %v, %v, want its own answer", got, err)
	}
	if n := tries.Load(); n != 2 {
		t.Errorf("%d discoveries, want 2: a failure is not shared", n)
	}
}
