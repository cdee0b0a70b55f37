package action

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Config is what every action shares, as Helm's action.Configuration is:
// the cluster it acts on (reached through the kubectl flags), how it reads
// packages, their limits, Crossplane's namespace and where it reports.
// A command builds one from its flags and hands it to the actions it runs;
// the cluster is connected to, and its ImageConfigs read, once, when an
// action first needs them.
type Config struct {
	// Getter resolves the kubectl flags (--kubeconfig, --context, --as...).
	Getter genericclioptions.RESTClientGetter
	// APIGroup is the package API to use when the cluster serves several
	// ("": the newest served).
	APIGroup string
	// XPNamespace is Crossplane's namespace: its pull secrets live there.
	XPNamespace string
	// Source says how packages are read (registry, retries, platform).
	Source source.Options
	// Limits bound what a package read may parse.
	Limits xpkg.Limits
	// NoImageConfig reads packages as written, without the cluster's
	// ImageConfigs (--no-image-config).
	NoImageConfig bool
	// Offline builds objects without asking the cluster (a client dry run
	// of install).
	Offline bool
	// AssumeUpgrades is what plans take the package manager's automatic
	// dependency upgrades to be (--assume-dependency-upgrades: off,
	// upgrades, downgrades); "" reads them from its Deployment.
	AssumeUpgrades string
	Events         Events

	clients  *cluster.Clients
	cluster  *cluster.Cluster
	registry *resolve.Registry
	xp       *diagnose.Crossplane
}

// Events is where every action reports as it goes, a line at a time:
// progress, warnings and the packages it read on Progress (stderr for the
// command line), what a change did along the way on Results. A nil
// writer is silent.
type Events struct {
	Progress io.Writer
	// Results hears what a change did on its way (a revision activated,
	// a package rolled back).
	Results io.Writer
	// Bar, when set, shows the download of a package's layer (a terminal).
	Bar io.Writer
}

// say tells Progress one line, formatted as fmt.Sprintf formats.
func (e Events) say(format string, args ...any) { writeLine(e.Progress, format, args) }

// result tells Results one line, formatted as fmt.Sprintf formats.
func (e Events) result(format string, args ...any) { writeLine(e.Results, format, args) }

func writeLine(w io.Writer, format string, args []any) {
	if w != nil {
		_, _ = io.WriteString(w, fmt.Sprintf(format, args...)+"\n")
	}
}

// said tells Progress that a package was read, and what of it.
func (e Events) said(i source.Info) { e.say("%s", i.Describe()) }

// progress is Progress for the waits of pkg/cluster, which write their
// lines themselves.
func (e Events) progress() io.Writer {
	if e.Progress == nil {
		return io.Discard
	}
	return e.Progress
}

// apiClients are the API clients the kubectl flags resolve to, built
// once. Unexported, as connect is: the command layer reaches the cluster
// through the actions only.
func (c *Config) apiClients() *cluster.Clients {
	if c.clients == nil {
		c.clients = cluster.NewClients(c.Getter)
	}
	return c.clients
}

// connect discovers the cluster's package API and connects to it, once.
// Offline it is a cluster that only builds objects (unless an API group
// was asked for, which needs discovery).
func (c *Config) connect() (*cluster.Cluster, error) {
	if c.cluster != nil {
		return c.cluster, nil
	}
	if c.Offline && c.APIGroup == "" {
		c.cluster = cluster.NewCluster(nil, cluster.StaticDialect(), "")
		return c.cluster, nil
	}
	cl, err := cluster.Connect(c.apiClients(), c.APIGroup)
	if err != nil {
		return nil, err
	}
	c.cluster = cl
	return cl, nil
}

// Registry reads packages on behalf of the cluster, as its package
// manager does: through its ImageConfigs (unless NoImageConfig) and pull
// secrets, saying on Progress which ImageConfig applied to what. Offline
// it reads as the user would.
func (c *Config) Registry(ctx context.Context) (*resolve.Registry, error) {
	if c.registry != nil {
		return c.registry, nil
	}
	if c.Offline {
		c.registry = resolve.Direct(c.Source)
		return c.registry, nil
	}
	cl, err := c.connect()
	if err != nil {
		return nil, err
	}
	ev := c.Events
	reg, err := resolve.NewRegistry(ctx, cl, c.XPNamespace, c.Source, !c.NoImageConfig, func(s string) { ev.say("%s", s) })
	if err != nil {
		return nil, err
	}
	reg.OnResolve = func(res imageconfig.Resolution) { ev.say("%s", resolve.DescribeResolution(res)) }
	c.registry = reg
	return reg, nil
}

// Open reads the package ref names with options so and says on Progress
// what it read (a download bar on Events.Bar).
func (c *Config) Open(ctx context.Context, ref string, so source.Options) (*source.Package, error) {
	if c.Events.Bar != nil {
		so.Progress = c.Events.Bar
	}
	p, err := source.Open(ctx, ref, so)
	if err != nil {
		return nil, err
	}
	c.Events.said(p.Info)
	return p, nil
}

// namespace is Crossplane's namespace, where the runtimes run.
func (c *Config) namespace() string { return cmp.Or(c.XPNamespace, "crossplane-system") }
