// Package plugin is the command layer of kubectl-xpkg: one file per verb, each
// an options struct with Complete, Validate and Run that binds the flags onto
// the use cases of pkg/action (through one action.Config), runs them and
// prints what they return. It never reaches the cluster API (pkg/cluster)
// itself: pkg/testing/arch holds it to that.
package plugin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/util/templates"
	"k8s.io/kubectl/pkg/util/term"

	// Credential plugins a kubeconfig may name: exec is built into client-go;
	// this registers oidc (and the stubs that explain the removed cloud ones).
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/version"
)

// DisplayName is how the plugin is invoked through kubectl.
const DisplayName = "kubectl xpkg"

// Command groups in `kubectl xpkg --help`.
const (
	groupCluster = "cluster"
	groupLocal   = "local"
)

// Root holds what every verb shares: the kubectl connection flags and the
// I/O streams.
type Root struct {
	ConfigFlags *genericclioptions.ConfigFlags
	IOStreams   genericiooptions.IOStreams

	// contexts are the values of --context (several for a fleet).
	contexts *contextsFlag
	// getter, when set, replaces ConfigFlags as the one cluster's
	// connection: the fake cluster that the in-process command tests
	// (harness_test.go) hand the root. Nothing outside the package sets
	// it; the kubectl flags, and so the user, never do.
	getter genericclioptions.RESTClientGetter
}

// NewCmdRoot builds the kubectl-xpkg command tree.
func NewCmdRoot(streams genericiooptions.IOStreams) *cobra.Command {
	return newRoot(streams).command()
}

func newRoot(streams genericiooptions.IOStreams) *Root {
	flags := genericclioptions.NewConfigFlags(true).WithDiscoveryBurst(300).WithDiscoveryQPS(50)
	// client-go would name the plugin after its own unstamped version
	// ("v0.0.0 ... kubernetes/$Format"): audit logs should see ours.
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.UserAgent = version.Get().UserAgent()
		return c
	}
	return &Root{ConfigFlags: flags, IOStreams: streams}
}

func (root *Root) command() *cobra.Command {
	streams := root.IOStreams
	cmd := &cobra.Command{
		Use:           "kubectl-xpkg",
		Short:         "Manage Crossplane packages: install, inspect, upgrade and compare providers, configurations and functions",
		Long:          helpLong("root"),
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: DisplayName},
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          unknownVerb,
		// The bare command prints help.
		Run:              func(cmd *cobra.Command, _ []string) { _ = cmd.Help() },
		PersistentPreRun: quietKlog,
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SuggestionsMinimumDistance = 2
	cmd.SetFlagErrorFunc(flagError)

	flags := cmd.PersistentFlags()
	root.ConfigFlags.AddFlags(flags)
	root.contexts = wrapContextFlag(flags)
	addKlogFlags(cmd)

	cmd.AddCommand(NewCmdVersion(root), NewCmdExtract(root), NewCmdValidate(root), NewCmdDiff(root), NewCmdVersions(root),
		NewCmdInstall(root), NewCmdGet(root), NewCmdDescribe(root), NewCmdUpgrade(root), NewCmdRollback(root), NewCmdUninstall(root), NewCmdRename(root), NewCmdTree(root), NewCmdOutdated(root), NewCmdDoctor(root), NewCmdPlan(root), NewCmdInspect(root), NewCmdMirror(root), NewCmdActivation(root))
	addGroups(cmd)
	// kubectl's own normalisation: Examples are indented by two spaces;
	// Long is Markdown, rendered by help when it is printed (rendering
	// every command's at each start would cost a millisecond).
	for _, c := range append(cmd.Commands(), cmd) {
		c.Example = templates.Examples(c.Example)
	}
	cmd.SetHelpFunc(help)
	return cmd
}

// help is cobra's help (the long description, then the usage) with the
// description normalised by kubectl's templates (Markdown: a paragraph is
// one line, lists are indented) and wrapped to the terminal as kubectl
// wraps its own help: at 80, 100 or 120 columns, whichever the terminal
// fits; not at all when stdout is no terminal, so that a script sees a
// paragraph per line.
func help(c *cobra.Command, _ []string) {
	out := c.OutOrStdout()
	if desc := longDesc(c); desc != "" {
		fmt.Fprint(term.NewResponsiveWriter(out), desc+"\n\n")
	}
	if c.Runnable() || c.HasSubCommands() {
		fmt.Fprint(out, c.UsageString())
	}
}

// longDesc is the command's description as help prints it.
func longDesc(c *cobra.Command) string {
	if c.Long == "" {
		return strings.TrimSpace(c.Short)
	}
	return templates.LongDesc(c.Long)
}

// addGroups declares the help sections that at least one verb uses.
func addGroups(cmd *cobra.Command) {
	for _, g := range []*cobra.Group{
		{ID: groupCluster, Title: "Cluster Commands:"},
		{ID: groupLocal, Title: "Local Package Commands:"},
	} {
		for _, c := range cmd.Commands() {
			if c.GroupID == g.ID {
				cmd.AddGroup(g)
				break
			}
		}
	}
}

// addKlogFlags exposes klog's -v and --vmodule the way kubectl does, so that
// -v=6 shows API requests and -v=9 their bodies.
func addKlogFlags(cmd *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for _, name := range []string{"v", "vmodule"} {
		cmd.PersistentFlags().AddGoFlag(fs.Lookup(name))
	}
}

// quietKlog silences client-go's own logging unless -v asks for it: what
// it logs at the default level (a discovery failure, an unhandled error)
// comes back as the error the verb prints, once and in one line.
func quietKlog(cmd *cobra.Command, _ []string) {
	if f := cmd.Flags().Lookup("v"); f != nil && f.Value.String() != "0" {
		return
	}
	klog.SetLogger(logr.Discard())
}

// flagError makes a flag parsing failure a usage error that points at help.
func flagError(c *cobra.Command, err error) error {
	return &exit.UsageError{Err: err, Hint: fmt.Sprintf("See '%s --help' for usage.", c.CommandPath())}
}

// unknownVerb rejects arguments that name no verb, the way kubectl does.
func unknownVerb(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	}
	return &exit.UsageError{Err: errors.New(msg), Hint: fmt.Sprintf("Run '%s --help' for usage.", c.CommandPath())}
}

// exactArgs is cobra.ExactArgs with a message that names the arguments.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		return &exit.UsageError{
			Err:  fmt.Errorf("%s takes %s (got %d argument(s))", c.CommandPath(), names, len(args)),
			Hint: fmt.Sprintf("See '%s --help' for usage.", c.CommandPath()),
		}
	}
}

// options is the kubectl-style lifecycle of a verb's options.
type options interface {
	Complete(root *Root, cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runOptions runs a verb's options through their lifecycle.
func runOptions(root *Root, o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(root, cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}
