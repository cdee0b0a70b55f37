package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// contextsFlag is kubectl's --context, which the read verbs (get,
// outdated, doctor, version) also take repeated or as a glob: it records
// every value and hands the last to ConfigFlags, so that one --context
// works as it always did.
type contextsFlag struct {
	pflag.Value
	names []string
}

func (c *contextsFlag) Set(s string) error {
	c.names = append(c.names, s)
	return c.Value.Set(s)
}

// several tells whether the values name more than one cluster, or a glob.
func (c *contextsFlag) several() bool {
	if c == nil {
		return false
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(c.names)))
	return len(distinct) > 1 || slices.ContainsFunc(distinct, action.IsContextGlob)
}

// wrapContextFlag takes over the --context flag that ConfigFlags added.
func wrapContextFlag(fs *pflag.FlagSet) *contextsFlag {
	f := fs.Lookup("context")
	if f == nil {
		return nil
	}
	c := &contextsFlag{Value: f.Value}
	f.Value = c
	f.Usage = "The name of the kubeconfig context to use; get, outdated, doctor and version take it repeated or as a glob ('prod-*') to ask several clusters at once, each bounded as a whole by --request-timeout (30s when it is 0 or unset)."
	return c
}

// FleetFlags are the flags of the verbs that ask several clusters.
type FleetFlags struct {
	AllContexts bool
}

// AddFlags registers the flags.
func (f *FleetFlags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.AllContexts, "all-contexts", false, "Ask every context of the kubeconfig, at once: one table with a CLUSTER column first (as do a repeated --context and a glob). Each context's whole read, its credential plugin included, is bounded by --request-timeout (30s when it is 0 or unset): one that has not answered by then is <unreachable>, the others print.")
}

// errSeveralContexts is a change verb given several clusters.
var errSeveralContexts = &exit.UsageError{
	Err:  errors.New("--context names one cluster here: only get, outdated, doctor and version take it repeated or as a glob"),
	Hint: "Run the command once per context.",
}

// fleet is the fleet the command line names (nil: one cluster, as
// always): each context's Config is built from the user's flags with that
// context, for the verb's flags, and reports on stderr under the
// context's name.
func (r *Root) fleet(ff *FleetFlags, cf *ClusterFlags, sf *SourceFlags, xpNamespace string) (*action.Fleet, error) {
	if !ff.AllContexts && !r.contexts.several() {
		return nil, nil
	}
	raw, err := r.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	have := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		have = append(have, name)
	}
	var asked []string
	if r.contexts != nil {
		asked = r.contexts.names
	}
	if ff.AllContexts && len(asked) > 0 {
		return nil, &exit.UsageError{Err: errors.New("--all-contexts asks every context: give it or --context, not both"), Hint: "See 'kubectl xpkg --help' for usage."}
	}
	names, err := action.SelectContexts(have, asked, ff.AllContexts)
	if err != nil {
		return nil, err
	}
	timeout, err := fleetTimeout(r.ConfigFlags.Timeout)
	if err != nil {
		return nil, err
	}
	out := &lockedWriter{w: r.IOStreams.ErrOut}
	members := make([]action.Member, 0, len(names))
	for _, name := range names {
		getter := newMemberGetter(r.memberFlags(name), raw)
		cfg, err := r.configFor(getter, cf, sf, xpNamespace)
		if err != nil {
			return nil, err
		}
		cfg.Events = action.Events{Progress: &prefixWriter{out: out, prefix: "context " + name + ": "}}
		members = append(members, action.Member{Context: name, Config: cfg, Credential: credentialPlugin(getter)})
	}
	f := action.NewFleet(members)
	f.Timeout = timeout
	return f, nil
}

// fleetTimeout is the bound of each cluster's whole read: --request-timeout
// when it is set above 0, else the default.
func fleetTimeout(flag *string) (time.Duration, error) {
	if flag == nil || *flag == "" {
		return 0, nil
	}
	d, err := clientcmd.ParseTimeout(*flag)
	if err != nil {
		return 0, &exit.UsageError{Err: fmt.Errorf("--request-timeout %q: want a duration such as 30s or 2m, or seconds", *flag), Hint: "See --help for usage."}
	}
	return d, nil
}

// credentialPlugin is the exec credential plugin the context runs, as
// its kubeconfig names it ("" for none, or a kubeconfig that does not
// load: the read says so).
func credentialPlugin(getter genericclioptions.RESTClientGetter) string {
	rc, err := getter.ToRESTConfig()
	if err != nil || rc.ExecProvider == nil {
		return ""
	}
	return rc.ExecProvider.Command
}

// askFleet is action.RunFleet with the credential plugins it starts kept
// off this process's stderr (detachPluginStderr).
func askFleet[T any](ctx context.Context, f *action.Fleet, read func(context.Context, *action.Config) (T, error)) []action.Answer[T] {
	restore := detachPluginStderr()
	defer restore()
	return action.RunFleet(ctx, f, read)
}

// detachPluginStderr hands the exec credential plugins client-go starts
// from now on a pipe of this process as their stderr, copied to stderr,
// instead of stderr itself (client-go gives them os.Stderr as it is when
// it first builds a context's transport). A plugin the fleet leaves behind
// (a login waiting for a browser) would otherwise keep stderr open after
// this process exits, and whatever reads it (a pipe, a test harness)
// waiting. restore puts stderr back and copies what is left, waiting a
// moment at most for a plugin that still holds the pipe.
func detachPluginStderr() (restore func()) {
	orig := os.Stderr
	pr, pw, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(orig, pr)
	}()
	os.Stderr = pw
	return func() {
		os.Stderr = orig
		_ = pw.Close()
		if pr.SetReadDeadline(time.Now().Add(100*time.Millisecond)) == nil {
			<-copied
		}
	}
}

// memberFlags are the user's kubectl flags with context as --context:
// each cluster gets its own client config, credentials (an exec plugin
// runs per context, as kubectl runs it) and discovery cache.
func (r *Root) memberFlags(context string) *genericclioptions.ConfigFlags {
	src := r.ConfigFlags
	f := genericclioptions.NewConfigFlags(true).WithDiscoveryBurst(300).WithDiscoveryQPS(50)
	f.CacheDir, f.KubeConfig, f.ClusterName, f.AuthInfoName = src.CacheDir, src.KubeConfig, src.ClusterName, src.AuthInfoName
	f.Namespace, f.APIServer, f.TLSServerName, f.Insecure = src.Namespace, src.APIServer, src.TLSServerName, src.Insecure
	f.CertFile, f.KeyFile, f.CAFile, f.BearerToken = src.CertFile, src.KeyFile, src.CAFile, src.BearerToken
	f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup, f.ImpersonateUserExtra = src.Impersonate, src.ImpersonateUID, src.ImpersonateGroup, src.ImpersonateUserExtra
	f.Username, f.Password, f.Timeout, f.DisableCompression = src.Username, src.Password, src.Timeout, src.DisableCompression
	f.WrapConfigFn = src.WrapConfigFn
	f.Context = &context
	return f
}

// lockedWriter serialises the lines of concurrent writers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// prefixWriter writes whole lines, each after prefix (the cluster it is
// about), through a lockedWriter shared with the other clusters.
type prefixWriter struct {
	out    *lockedWriter
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.out.mu.Lock()
		_, err := fmt.Fprintf(p.out.w, "%s%s\n", p.prefix, p.buf[:i])
		p.out.mu.Unlock()
		p.buf = p.buf[i+1:]
		if err != nil {
			return len(b), err
		}
	}
}
