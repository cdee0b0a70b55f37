package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
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
func readInstalled(ctx context.Context, r *Root, cf *ClusterFlags, arg string, so source.Options, xpNamespace string) (*cluster.Cluster, *lifecycle.Installed, error) {
	c, err := cf.connect(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := c.Lookup(ctx, arg)
	if err != nil {
		return nil, nil, err
	}
	in, err := lifecycle.ReadInstalled(ctx, c, p, so, xpNamespace)
	return c, in, err
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
