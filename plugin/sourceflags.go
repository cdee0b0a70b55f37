package plugin

import (
	"context"
	"fmt"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/version"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// SourceFlags are the flags of every verb that reads packages.
type SourceFlags struct {
	// NoImageConfig reads packages as written, without the cluster's
	// ImageConfigs.
	NoImageConfig bool
	Registry      string
	Platform      string
	Insecure      bool
	MaxSize       string
	MaxDoc        string
	Retry         source.Retry
}

// AddFlags registers the flags.
func (f *SourceFlags) AddFlags(fs *pflag.FlagSet) {
	f.AddRegistryFlags(fs)
	fs.StringVar(&f.Platform, "platform", "", "Platform to pick from a multi-platform package image, as os/arch[/variant] (default linux/amd64).")
	fs.StringVar(&f.MaxSize, "max-size", "1Gi", "Largest decompressed package content to read, guarding against decompression bombs.")
	fs.StringVar(&f.MaxDoc, "max-document-size", "32Mi", "Largest single YAML document to parse; documents not in plain block style (tabs, CRLF, flow style, anchors, tags) are read up to 1/32 of it.")
}

// AddRegistryFlags registers only the flags of registry access, for verbs
// that list tags and resolve digests without reading package content.
func (f *SourceFlags) AddRegistryFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.NoImageConfig, "no-image-config", false, "Read packages as written, without the cluster's ImageConfigs (their image rewrites and pull secrets), which are otherwise applied as Crossplane's package manager applies them.")
	fs.StringVar(&f.Registry, "registry", "", fmt.Sprintf("Registry for package references that name none (default $%s, else %s).", source.RegistryEnvVar, source.DefaultRegistry))
	fs.BoolVar(&f.Insecure, "insecure", false, "Allow plain HTTP and unverified TLS to registries that are not on loopback.")
	fs.IntVar(&f.Retry.Attempts, "retries", source.DefaultRetry.Attempts, "Times to retry a registry request after a transient fault (5xx, 429, a reset, stalled or too slow connection); 4xx answers and redirect loops are never retried.")
	fs.DurationVar(&f.Retry.MaxTime, "retry-timeout", source.DefaultRetry.MaxTime, "Longest time one registry request may take, its redirects, retries, waits (Retry-After included) and answer's body counted; a body earns a second more for every 4 KiB it brings.")
	fs.DurationVar(&f.Retry.Stall, "stall-timeout", source.DefaultRetry.Stall, "How long a registry connection may send nothing, or less than 4 KiB a second over that long, before it counts as a fault (and is retried, or resumed mid-blob).")
}

// Options turns the flags into source options and parse limits.
func (f *SourceFlags) Options() (source.Options, xpkg.Limits, error) {
	o := source.Options{Registry: f.Registry, Insecure: f.Insecure, UserAgent: version.Get().UserAgent(), Retry: f.Retry}
	limits := xpkg.DefaultLimits
	switch {
	case f.Retry.Attempts < 0:
		return o, limits, fmt.Errorf("--retries %d: want 0 or more", f.Retry.Attempts)
	case f.Retry.MaxTime <= 0, f.Retry.Stall <= 0:
		return o, limits, fmt.Errorf("--retry-timeout and --stall-timeout want a positive duration such as 30s")
	}
	if f.Platform != "" {
		p, err := v1.ParsePlatform(f.Platform)
		if err != nil || p.OS == "" || p.Architecture == "" {
			return o, limits, fmt.Errorf("--platform %q: want os/arch[/variant], e.g. linux/arm64", f.Platform)
		}
		o.Platform = p
	}
	if f.MaxSize == "" { // registry flags only: no content is read
		return o, limits, nil
	}
	size, err := byteSize("--max-size", f.MaxSize)
	if err != nil {
		return o, limits, err
	}
	o.MaxUncompressed = size
	doc, err := byteSize("--max-document-size", f.MaxDoc)
	if err != nil {
		return o, limits, err
	}
	limits.MaxDocumentBytes = int(doc)
	return o, limits, nil
}

func byteSize(flag, v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive size such as 512Mi or 2Gi", flag, v)
	}
	return q.Value(), nil
}

// openPackage opens a package source and reports on stderr what was met;
// a terminal's stderr also shows the progress of large downloads.
func openPackage(ctx context.Context, r *Root, arg string, o source.Options) (*source.Package, error) {
	return (&action.Config{Events: r.events()}).Open(ctx, arg, o)
}
