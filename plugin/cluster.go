package plugin

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// ClusterFlags are the flags of every verb that talks to the package API.
type ClusterFlags struct {
	APIGroup string
}

// AddFlags registers the flags.
func (f *ClusterFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.APIGroup, "api-group", "", "Package API group to use when the cluster serves several ("+strings.Join(action.APIGroups(), ", ")+"); default: the newest served.")
}

// config is the actions' Config for a verb's flags: the kubectl
// connection flags, the package API group, how packages are read (sf may
// be nil: the verb reads none) and Crossplane's namespace.
func (r *Root) config(cf *ClusterFlags, sf *SourceFlags, xpNamespace string) (*action.Config, error) {
	if r.contexts.several() {
		return nil, errSeveralContexts
	}
	getter := genericclioptions.RESTClientGetter(r.ConfigFlags)
	if r.getter != nil {
		getter = r.getter
	}
	return r.configFor(getter, cf, sf, xpNamespace)
}

// configFor is config for the cluster getter reaches.
func (r *Root) configFor(getter genericclioptions.RESTClientGetter, cf *ClusterFlags, sf *SourceFlags, xpNamespace string) (*action.Config, error) {
	cfg := &action.Config{Getter: getter, APIGroup: cf.APIGroup, XPNamespace: xpNamespace, Events: r.events()}
	if sf == nil {
		return cfg, nil
	}
	so, limits, err := sf.Options()
	if err != nil {
		return nil, err
	}
	cfg.Source, cfg.Limits, cfg.NoImageConfig = so, limits, sf.NoImageConfig
	return cfg, nil
}

// events report on stderr, with a download bar when it is a terminal.
func (r *Root) events() action.Events {
	ev := action.Events{Progress: r.IOStreams.ErrOut}
	if f, ok := r.IOStreams.ErrOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		ev.Bar = f
	}
	return ev
}

// localRegistry reads for a local verb: as the user would, unless the
// command line names a cluster (--context or --kubeconfig), whose
// ImageConfigs and pull secrets then apply as for the cluster verbs.
func localRegistry(ctx context.Context, r *Root, cmd *cobra.Command, cf *ClusterFlags, sf *SourceFlags, so source.Options, xpNamespace string) (*resolve.Registry, error) {
	if sf.NoImageConfig || !namesCluster(cmd) {
		return resolve.Direct(so), nil
	}
	cfg, err := r.config(cf, nil, xpNamespace)
	if err != nil {
		return nil, err
	}
	cfg.Source = so
	return cfg.Registry(ctx)
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
	reg         *resolve.Registry
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
	return l.reg.Locate(ctx, arg, nil)
}
