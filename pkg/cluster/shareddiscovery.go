package cluster

import "sync"

// SharedDiscovery is what the clusters of a fleet share of discovery: the
// package APIs each API server serves, discovered once per server (its
// address) however many contexts reach it, as kubectl's discovery cache
// is kept per server, not per user. A discovery that fails is not
// shared: each context that waited on it discovers for itself.
type SharedDiscovery struct {
	mu     sync.Mutex
	byHost map[string]*discovered
}

// discovered is one server's package APIs, once they are known.
type discovered struct {
	done chan struct{}
	apis []ServedAPI
	err  error
}

// apis are host's package APIs: discover's answer, from the first
// context to ask for them.
func (s *SharedDiscovery) apis(host string, discover func() ([]ServedAPI, error)) ([]ServedAPI, error) {
	s.mu.Lock()
	if s.byHost == nil {
		s.byHost = map[string]*discovered{}
	}
	d, ok := s.byHost[host]
	if !ok {
		d = &discovered{done: make(chan struct{})}
		s.byHost[host] = d
	}
	s.mu.Unlock()
	if !ok {
		d.apis, d.err = discover()
		close(d.done)
		return d.apis, d.err
	}
	<-d.done
	if d.err != nil {
		return discover()
	}
	return d.apis, nil
}
