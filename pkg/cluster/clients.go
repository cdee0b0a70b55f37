// Package cluster is the plugin's side of the cluster: it builds API clients
// from the user's kubeconfig and kubectl flags, discovers which Crossplane
// package API the cluster serves, and reads and writes package objects.
package cluster

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Clients hands out API clients built once from a RESTClientGetter, which is
// how every standard kubectl flag (--kubeconfig, --context, --as, ...) reaches
// the plugin.
type Clients struct {
	getter genericclioptions.RESTClientGetter
	// shared, when set, is the discovery this cluster shares with others
	// (a fleet's contexts).
	shared *SharedDiscovery

	once    sync.Once
	config  *rest.Config
	dynamic dynamic.Interface
	err     error
}

// NewClients wraps a RESTClientGetter, usually the root command's ConfigFlags.
func NewClients(getter genericclioptions.RESTClientGetter) *Clients {
	return &Clients{getter: getter}
}

// ShareDiscovery has Connect take the package APIs from share when
// another cluster on the same API server discovered them.
func (c *Clients) ShareDiscovery(share *SharedDiscovery) { c.shared = share }

// DynamicGetter is a RESTClientGetter that hands out its own dynamic
// client, built beforehand: client-go's fake, for tests that need no API
// server (pkg/testing/fakecluster). Clients over one have no REST
// configuration, so the Cluster they connect to reads everything through
// that client. The kubectl flags never are one.
type DynamicGetter interface {
	genericclioptions.RESTClientGetter
	ToDynamicClient() (dynamic.Interface, error)
}

func (c *Clients) init() {
	c.once.Do(func() {
		if g, ok := c.getter.(DynamicGetter); ok {
			c.dynamic, c.err = g.ToDynamicClient()
			return
		}
		c.config, c.err = c.getter.ToRESTConfig()
		if c.err != nil {
			c.err = fmt.Errorf("load kubeconfig: %w", c.err)
			return
		}
		// No client-side rate limit (client-go's default is 5 requests a
		// second): every fan-out here bounds how many requests it has in
		// flight, and the API server's priority and fairness paces the
		// rest with 429s, which client-go honours and retries.
		c.config = rest.CopyConfig(c.config)
		c.config.QPS = -1
		c.dynamic, c.err = dynamic.NewForConfig(c.config)
	})
}

// RESTConfig is the client configuration the flags resolved to (nil over
// a DynamicGetter).
func (c *Clients) RESTConfig() (*rest.Config, error) {
	c.init()
	return c.config, c.err
}

// Dynamic is a client for any resource, package objects included.
func (c *Clients) Dynamic() (dynamic.Interface, error) {
	c.init()
	return c.dynamic, c.err
}

// Discovery is the (disk-cached, per --cache-dir) discovery client.
func (c *Clients) Discovery() (discovery.CachedDiscoveryInterface, error) {
	dc, err := c.getter.ToDiscoveryClient()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return dc, nil
}

// Mapper maps kinds to resources through discovery.
func (c *Clients) Mapper() (meta.RESTMapper, error) {
	m, err := c.getter.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return m, nil
}

// Namespace is the namespace from -n or the kubeconfig context, and whether
// the user set it explicitly.
func (c *Clients) Namespace() (string, bool, error) {
	return c.getter.ToRawKubeConfigLoader().Namespace()
}
