package plugin

import (
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// changedString is the flag's value if the user set it, else nil: a field
// the user did not set is not sent.
func changedString(f *pflag.FlagSet, name string) *string {
	if !f.Changed(name) {
		return nil
	}
	v, _ := f.GetString(name)
	return &v
}

func changedBool(f *pflag.FlagSet, name string) *bool {
	if !f.Changed(name) {
		return nil
	}
	v, _ := f.GetBool(name)
	return &v
}

func checkObjectOutput(o string) error {
	return printers.CheckFormat(o, printers.FormatYAML, printers.FormatJSON, printers.FormatName)
}

// printObject prints an object through cli-runtime's PrintFlags, as
// kubectl does: as a document with -o yaml|json, as kind.group/name with
// -o name, else as kind.group/name and what was done (verb).
func printObject(r *Root, output string, u *unstructured.Unstructured, verb string) error {
	pf := genericclioptions.NewPrintFlags(verb)
	pf.OutputFormat = &output
	p, err := pf.ToPrinter()
	if err != nil {
		return err
	}
	return p.PrintObj(u, r.IOStreams.Out)
}
