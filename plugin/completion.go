package plugin

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
)

// completePackages completes installed package names (and KIND/NAME when
// withKind), and package kinds where kinds is set, for the verbs that name
// packages. It asks the cluster the flags on the command line point at.
func completePackages(root *Root, kinds, withKind bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, _ := root.config(&ClusterFlags{}, nil, "")
		out, err := action.PackageNames(cmd.Context(), cfg, kinds && len(args) == 0, withKind)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		return filterPrefix(out, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeKinds completes install's optional first argument.
func completeKinds(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return filterPrefix([]string{"provider", "configuration", "function"}, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeOutput registers the values of -o.
func completeOutput(cmd *cobra.Command, values ...string) {
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

func filterPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
