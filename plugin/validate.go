package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/validate"
)

// ValidateOptions holds the flags and state of `kubectl xpkg validate`.
type ValidateOptions struct {
	Output string
	Source SourceFlags
	reads  localReads

	sources []string
	root    *Root
}

// ValidateReport is what validate -o json|yaml prints.
type ValidateReport struct {
	Packages []validate.Result `json:"packages"`
	Summary  validate.Summary  `json:"summary"`
}

// NewCmdValidate builds `kubectl xpkg validate`.
func NewCmdValidate(root *Root) *cobra.Command {
	o := &ValidateOptions{root: root}
	cmd := &cobra.Command{
		Use:     "validate SOURCE...",
		Short:   "Check packages against the xpkg specification and report every violation",
		Long:    helpLong("validate"),
		Example: helpExample("validate"),
		GroupID: groupLocal,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exactArgs(1, "at least one SOURCE")(c, args)
			}
			return nil
		},
		RunE: runOptions(root, o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: a human report).")
	completeOutput(cmd, "json", "yaml")
	o.Source.AddFlags(cmd.Flags())
	o.reads.addFlags(cmd.Flags())
	return cmd
}

// Complete keeps the sources.
func (o *ValidateOptions) Complete(root *Root, cmd *cobra.Command, args []string) error {
	o.root, o.sources, o.reads.cmd = root, args, cmd
	return nil
}

// Validate checks the flags.
func (o *ValidateOptions) Validate() error {
	return printers.CheckFormat(o.Output)
}

// Run checks every source and reports.
func (o *ValidateOptions) Run(ctx context.Context) error {
	so, limits, err := o.Source.Options()
	if err != nil {
		return err
	}
	out := &printers.ErrWriter{W: o.root.IOStreams.Out}
	var results []validate.Result
	for _, src := range o.sources {
		ref, rso, err := o.reads.read(ctx, o.root, &o.Source, so, src)
		if err != nil {
			return err
		}
		r := validate.Check(ctx, ref, rso, limits)
		results = append(results, r)
		if o.Output == "" {
			validate.WriteText(out, r)
		}
	}
	s := validate.Summarize(results)
	if err := o.summary(out, results, s); err != nil {
		return err
	}
	return validateStatus(s)
}

// summary prints the summary after the packages' text, or the whole
// report with -o.
func (o *ValidateOptions) summary(out *printers.ErrWriter, results []validate.Result, s validate.Summary) error {
	if o.Output != "" {
		if err := printers.PrintObject(out, o.Output, ValidateReport{Packages: results, Summary: s}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(out, s)
	}
	return out.Err
}

// validateStatus is the exit status: 2 when a package could not be read,
// else 1 when one is invalid.
func validateStatus(s validate.Summary) error {
	switch {
	case s.Unreadable > 0:
		return exit.WithCode(exit.ValidateUnreadable, exit.Silent)
	case s.Invalid > 0:
		return exit.WithCode(exit.ValidateInvalid, exit.Silent)
	}
	return nil
}
