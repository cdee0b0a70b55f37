package plugin

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/lifecycle"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// ClusterFlags are the flags of every verb that talks to the package API.
type ClusterFlags struct {
	APIGroup string
}

// AddFlags registers the flags.
func (f *ClusterFlags) AddFlags(fs *pflag.FlagSet) {
	var groups []string
	for _, g := range cluster.Generations {
		groups = append(groups, g.Group)
	}
	fs.StringVar(&f.APIGroup, "api-group", "", "Package API group to use when the cluster serves several ("+strings.Join(groups, ", ")+"); default: the newest served.")
}

// connect discovers the cluster's package API.
func (f *ClusterFlags) connect(r *Root) (*cluster.Cluster, error) {
	return cluster.Connect(r.Clients(), f.APIGroup)
}

// readInstalled connects, finds the package arg names, and reads what
// planning a change of it or comparing it takes.
func readInstalled(ctx context.Context, r *Root, cf *ClusterFlags, arg string, sf *SourceFlags, so source.Options, xpNamespace string) (*cluster.Cluster, *lifecycle.Installed, error) {
	c, err := cf.connect(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := c.Lookup(ctx, arg)
	if err != nil {
		return nil, nil, err
	}
	reg, err := clusterRegistry(ctx, r, c, xpNamespace, sf, so)
	if err != nil {
		return nil, nil, err
	}
	in, err := lifecycle.ReadInstalled(ctx, reg, p)
	return c, in, err
}

// clusterRegistry reads packages on behalf of cluster c: through its
// ImageConfigs (unless --no-image-config) and pull secrets, saying on
// stderr which ImageConfig applied to what.
func clusterRegistry(ctx context.Context, r *Root, c *cluster.Cluster, xpNamespace string, sf *SourceFlags, so source.Options) (*lifecycle.Registry, error) {
	errOut := r.IOStreams.ErrOut
	reg, err := lifecycle.NewRegistry(ctx, c, xpNamespace, so, !sf.NoImageConfig, func(s string) { fmt.Fprintln(errOut, s) })
	if err != nil {
		return nil, err
	}
	reg.OnResolve = func(res imageconfig.Resolution) { fmt.Fprintln(errOut, lifecycle.Describe(res)) }
	return reg, nil
}

// localRegistry reads for a local verb: as the user would, unless the
// command line names a cluster (--context or --kubeconfig), whose
// ImageConfigs and pull secrets then apply as for the cluster verbs.
func localRegistry(ctx context.Context, r *Root, cmd *cobra.Command, cf *ClusterFlags, sf *SourceFlags, so source.Options, xpNamespace string) (*lifecycle.Registry, error) {
	if sf.NoImageConfig || !namesCluster(cmd) {
		return lifecycle.DirectRegistry(so), nil
	}
	c, err := cf.connect(r)
	if err != nil {
		return nil, err
	}
	return clusterRegistry(ctx, r, c, xpNamespace, sf, so)
}

// namesCluster tells whether the command line names a cluster explicitly.
func namesCluster(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags()
	return f.Changed("context") || f.Changed("kubeconfig")
}

// defaultXPNamespace is where Crossplane runs unless told otherwise.
const defaultXPNamespace = "crossplane-system"

// waitFlag is --wait[=DURATION]: bare, it waits DefaultWait.
type waitFlag struct{ d time.Duration }

// DefaultWait is how long a bare --wait waits.
const DefaultWait = 5 * time.Minute

func (w *waitFlag) String() string {
	if w.d == 0 {
		return ""
	}
	return w.d.String()
}

func (w *waitFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("want a duration such as 90s or 5m")
	}
	w.d = d
	return nil
}

func (w *waitFlag) Type() string { return "duration" }

func addWaitFlag(fs *pflag.FlagSet, w *waitFlag, what string) {
	fs.Var(w, "wait", fmt.Sprintf("Wait until %s, at most this long (bare --wait: %s).", what, DefaultWait))
	fs.Lookup("wait").NoOptDefVal = DefaultWait.String()
}

// localReads is how a local verb reads package references: as the user
// would, or, when the command line names a cluster (--context or
// --kubeconfig), as that cluster's package manager would (ImageConfigs,
// their pull secrets).
type localReads struct {
	XPNamespace string
	cmd         *cobra.Command
	reg         *lifecycle.Registry
}

func (l *localReads) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&l.XPNamespace, "crossplane-namespace", defaultXPNamespace, "With --context or --kubeconfig: the namespace of Crossplane and of the pull secrets its ImageConfigs name.")
}

// read returns what to read for arg, and how; a local file or directory
// is read as it is.
func (l *localReads) read(ctx context.Context, r *Root, sf *SourceFlags, so source.Options, arg string) (string, source.Options, error) {
	if _, err := os.Stat(arg); err == nil {
		return arg, so, nil
	}
	if l.reg == nil {
		reg, err := localRegistry(ctx, r, l.cmd, &ClusterFlags{}, sf, so, l.XPNamespace)
		if err != nil {
			return "", so, err
		}
		l.reg = reg
	}
	return l.reg.Read(ctx, arg, nil)
}
