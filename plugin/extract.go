package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/extract"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// ExtractOptions holds the flags and state of `kubectl xpkg extract`.
type ExtractOptions struct {
	Output string
	Split  bool
	Only   []string
	Gzip   bool
	Source SourceFlags
	reads  localReads

	source string
	dir    string // split into this directory
	file   string // write to this file
	json   bool
	root   *Root
}

// NewCmdExtract builds `kubectl xpkg extract`.
func NewCmdExtract(root *Root) *cobra.Command {
	o := &ExtractOptions{root: root}
	cmd := &cobra.Command{
		Use:     "extract SOURCE [-o FILE|DIR/|json|yaml] [--only KIND]",
		Short:   "Write a package's contents: its package.yaml, some of its objects, or one file per object",
		Long:    helpLong("extract"),
		Example: helpExample("extract"),
		GroupID: groupLocal,
		Args:    exactArgs(1, "SOURCE"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "Where and how to write: FILE, DIR/ (one file per object), json (a List on stdout) or yaml (stdout, the default).")
	f.BoolVar(&o.Split, "split", false, "Write one file per object into the -o directory.")
	f.StringSliceVar(&o.Only, "only", nil, "Keep only objects of these kinds: a kind (e.g. CustomResourceDefinition, compositions) or crd, xrd, mrd, webhook, meta.")
	f.BoolVar(&o.Gzip, "gzip", false, "Gzip the stream (the format of Crossplane's package cache).")
	o.Source.AddFlags(f)
	o.reads.addFlags(f)
	return cmd
}

// Complete resolves the output mode from -o and --split.
func (o *ExtractOptions) Complete(root *Root, cmd *cobra.Command, args []string) error {
	o.root, o.source, o.reads.cmd = root, args[0], cmd
	switch out := o.Output; {
	case out == "" || out == printers.FormatYAML:
	case out == printers.FormatJSON:
		o.json = true
	case o.Split || strings.HasSuffix(out, "/"):
		o.dir = out
	default:
		o.file = out
	}
	return nil
}

// Validate rejects combinations that cannot be honoured.
func (o *ExtractOptions) Validate() error {
	switch {
	case o.Split && o.dir == "":
		return errors.New("--split needs a directory: -o DIR/")
	case o.Gzip && (o.json || o.dir != ""):
		return errors.New("--gzip applies to a YAML stream, not to -o json or a directory")
	}
	return nil
}

// Run reads the package and writes it out.
func (o *ExtractOptions) Run(ctx context.Context) error {
	p, limits, err := o.open(ctx)
	if err != nil {
		return err
	}
	defer p.Close()
	opts := extract.Options{Only: o.Only, JSON: o.json, Gzip: o.Gzip, Limits: limits}
	switch {
	case o.dir != "":
		return o.writeDir(ctx, p, opts)
	case o.file != "":
		return o.writeFile(ctx, p, opts)
	}
	return o.writeStdout(p, opts)
}

// open reads the package, and says what limits its content.
func (o *ExtractOptions) open(ctx context.Context) (*source.Package, xpkg.Limits, error) {
	so, limits, err := o.Source.Options()
	if err != nil {
		return nil, limits, err
	}
	ref, so, err := o.reads.read(ctx, o.root, &o.Source, so, o.source)
	if err != nil {
		return nil, limits, err
	}
	// What reaches stdout cannot be taken back (extract REF | kubectl
	// apply -f -): the content is verified before any of it is written.
	// A file or directory is put in place only after the check anyway.
	so.VerifyFirst = o.dir == "" && o.file == ""
	p, err := openPackage(ctx, o.root, ref, so)
	return p, limits, err
}

// writeStdout writes the package to stdout; a failure names its cause
// (the package's, when reading it failed).
func (o *ExtractOptions) writeStdout(p *source.Package, opts extract.Options) error {
	if err := o.write(p, opts); err != nil {
		return p.Cause(err)
	}
	return p.Close()
}

func (o *ExtractOptions) write(p *source.Package, opts extract.Options) error {
	content, err := p.Content()
	if err != nil {
		return err
	}
	return extract.Write(o.root.IOStreams.Out, content, opts)
}

func (o *ExtractOptions) writeFile(ctx context.Context, p *source.Package, opts extract.Options) error {
	f, err := extract.CreateFile(o.file)
	if err != nil {
		return err
	}
	defer f.Abort()
	content, err := p.Content()
	if err != nil {
		return err
	}
	if err := extract.Write(f, content, opts); err != nil {
		return p.Cause(fmt.Errorf("extract %s: %w", o.source, err))
	}
	if err := p.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // interrupted: nothing is put in place
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(o.root.IOStreams.ErrOut, "Wrote %s\n", o.file)
	return nil
}

func (o *ExtractOptions) writeDir(ctx context.Context, p *source.Package, opts extract.Options) error {
	d, err := extract.CreateDir(o.dir)
	if err != nil {
		return err
	}
	defer d.Abort()
	content, err := p.Content()
	if err != nil {
		return err
	}
	names, err := extract.Split(d, content, opts)
	if err != nil {
		return p.Cause(fmt.Errorf("extract %s: %w", o.source, err))
	}
	if err := p.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // interrupted: nothing is put in place
		return err
	}
	if err := d.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(o.root.IOStreams.ErrOut, "Wrote %d files to %s\n", len(names), o.dir)
	return nil
}
