package plugin

import (
	"context"
	"errors"
	"fmt"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/version"
)

// VersionOptions holds the flags and state of `kubectl xpkg version`.
type VersionOptions struct {
	ClientOnly bool
	Output     string
	Fleet      FleetFlags

	root *Root
	genericiooptions.IOStreams
}

// NewCmdVersion builds `kubectl xpkg version`.
func NewCmdVersion(root *Root) *cobra.Command {
	o := &VersionOptions{root: root, IOStreams: root.IOStreams}
	cmd := &cobra.Command{
		Use:     "version [--client] [-o json|yaml]",
		Short:   "Print the plugin version and the package APIs the cluster serves",
		Example: helpExample("version"),
		Args:    cobra.NoArgs,
		RunE:    runOptions(root, o),
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "Print only the plugin's version; do not contact the cluster.")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml.")
	completeOutput(cmd, "json", "yaml")
	o.Fleet.AddFlags(cmd.Flags())
	return cmd
}

// Complete has nothing to read: version takes no arguments.
func (o *VersionOptions) Complete(root *Root, _ *cobra.Command, _ []string) error {
	o.root = root
	return nil
}

// Validate checks the flags.
func (o *VersionOptions) Validate() error {
	return printers.CheckFormat(o.Output)
}

// Run prints the report. When the cluster cannot be reached the client
// version is still printed, and the error says why the rest is missing.
func (o *VersionOptions) Run(ctx context.Context) error {
	if !o.ClientOnly {
		fleet, err := o.root.fleet(&o.Fleet, &ClusterFlags{}, nil, "")
		if err != nil {
			return err
		}
		if fleet != nil {
			return o.runFleet(ctx, fleet)
		}
	}
	report := action.VersionReport{ClientVersion: version.Get()}
	var clusterErr error
	if !o.ClientOnly {
		cfg, _ := o.root.config(&ClusterFlags{}, nil, "")
		clusterErr = action.ServerVersion(cfg, &report)
	}
	var err error
	if o.Output != "" {
		err = printers.PrintObject(o.Out, o.Output, report)
	} else {
		err = o.printHuman(report, clusterErr == nil && !o.ClientOnly)
	}
	return errors.Join(err, clusterErr)
}

func (o *VersionOptions) printHuman(r action.VersionReport, withServer bool) error {
	c := r.ClientVersion
	details := []string{c.GoVersion, c.Platform}
	if c.GitCommit != "" {
		details = append([]string{"commit " + c.GitCommit}, details...)
	}
	fmt.Fprintf(o.Out, "Client Version: %s (%s)\n", c.Version, strings.Join(details, ", "))
	if !withServer {
		return nil
	}
	fmt.Fprintf(o.Out, "Server Version: %s\n", r.ServerVersion.GitVersion)
	if len(r.PackageAPIs) == 0 {
		fmt.Fprintln(o.Out, "Crossplane package APIs: none served (is Crossplane installed in this cluster?)")
		return nil
	}
	fmt.Fprintln(o.Out, "Crossplane package APIs:")
	t := printers.NewTable("GROUP", "VERSION", "KINDS")
	for _, api := range r.PackageAPIs {
		for _, v := range api.Versions {
			ver := v.Version
			if ver == api.PreferredVersion {
				ver += " (preferred)"
			}
			t.Row(api.Group, ver, strings.Join(v.Kinds, ", "))
		}
	}
	return t.Render(o.Out)
}
