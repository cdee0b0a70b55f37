// Package hostile builds a corpus of malformed and hostile Crossplane
// packages: tar entries that escape the package root, device files,
// decompression bombs, YAML bombs, broken image indexes and layers, and
// packages that break the content rules. Each case says what every verb
// must make of it, so that a test can run the corpus through the plugin as
// a user would and check that each refusal is clear, exits non-zero, writes
// nothing outside its target and stays within a memory bound.
//
// The bombs are small on disk: the gzip bomb is a few MB that expand to
// 8 GiB, the zstd bomb 256 KiB that expand to 8 GiB, the YAML bombs a few
// MB at most.
package hostile

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// Outcome is what reading a case's package must come to.
type Outcome int

const (
	// Unreadable: the image, a layer or the stream cannot be read, or
	// breaks a reading limit. Every verb fails naming the problem; validate
	// reports the package unreadable (exit 2).
	Unreadable Outcome = iota
	// Malformed: the stream is read, but a document (the first, so that
	// install's kind detection meets it too) is not a YAML mapping or is
	// refused by the YAML decoder. Every verb fails; validate reports the
	// package invalid (exit 1) under the yaml-stream rule.
	Malformed
	// BreaksRules: the package reads and parses, but breaks a content rule
	// of the xpkg specification. validate reports it invalid (exit 1);
	// extract and diff, which read packages without judging them, succeed;
	// install fails unless KindKnown.
	BreaksRules
)

func (o Outcome) String() string {
	switch o {
	case Unreadable:
		return "unreadable"
	case Malformed:
		return "malformed"
	case BreaksRules:
		return "breaks content rules"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Case is one hostile package.
type Case struct {
	// Name is short and fit for a repository path and a test name.
	Name string
	// About says what the package is.
	About string
	// Artifact is a v1.Image or a v1.ImageIndex.
	Artifact remote.Taggable
	// Want is a substring of the error each refusing verb gives (of the
	// validate report's line for the package, for validate).
	Want string
	// Outcome is what each verb must make of the package.
	Outcome Outcome
	// KindKnown: the meta object is fine, so install learns the kind
	// (BreaksRules only).
	KindKnown bool
	// InDocuments: what is wrong lies in the stream's documents (their
	// number or size), which only a reader that parses them sees: extract
	// to stdout hands out the raw stream.
	InDocuments bool
	// CorruptBlob, when set, is a blob that readers must get with a byte
	// changed: a registry checks digests on upload and would refuse it, so
	// serve it through a proxy that flips a byte, or flip it in an OCI
	// layout on disk (see Flip).
	CorruptBlob v1.Hash
	// Flags are extra flags for every verb, e.g. a lower --max-size that
	// keeps a bomb cheap.
	Flags []string
}

// Corpus builds every case. Building takes a second or two and holds about
// 30 MB.
func Corpus() ([]Case, error) {
	b := &builder{}
	layerCases(b)
	compressionCases(b)
	imageCases(b)
	streamCases(b)
	if b.err != nil {
		return nil, b.err
	}
	seen := map[string]bool{}
	for _, c := range b.cases {
		if seen[c.Name] || c.Artifact == nil || c.Want == "" {
			return nil, fmt.Errorf("hostile case %q: duplicate, or without artifact or Want", c.Name)
		}
		if _, err := name.NewTag("example.test/hostile/" + c.Name + ":v1"); err != nil {
			return nil, fmt.Errorf("hostile case %q: not fit for a repository name: %w", c.Name, err)
		}
		seen[c.Name] = true
	}
	return b.cases, nil
}

// Flip is how a corrupt blob is served: its middle byte inverted, as
// faultproxy's Corrupt fault does.
func Flip(blob []byte) {
	if len(blob) > 0 {
		blob[len(blob)/2] ^= 0xff
	}
}

// builder collects cases and the first error met building them.
type builder struct {
	cases []Case
	err   error
}

func (b *builder) add(c Case) { b.cases = append(b.cases, c) }

func (b *builder) fail(what string, err error) {
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("hostile: %s: %w", what, err)
	}
}

// layer is fixture.Layer, its error kept.
func (b *builder) layer(files ...fixture.File) v1.Layer {
	l, err := fixture.Layer(files...)
	b.fail("layer", err)
	return l
}

// image is fixture.ImageOf, its error kept.
func (b *builder) image(layers []v1.Layer, base ...int) v1.Image {
	img, err := fixture.ImageOf(layers, base...)
	b.fail("image", err)
	return img
}

// based is an image of one layer, annotated as the base layer.
func (b *builder) based(l v1.Layer) v1.Image {
	return b.image([]v1.Layer{l}, 0)
}

// stream is the standard image of a package.yaml stream.
func (b *builder) stream(stream []byte) v1.Image {
	img, err := fixture.Image(stream)
	b.fail("image", err)
	return img
}

// metaDoc is a well-formed Provider meta object.
const metaDoc = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-hostile\nspec:\n  crossplane:\n    version: '>=v1.14.0'\n"

// crdDoc is a small valid CRD a Provider may hold.
const crdDoc = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.hostile.example.org
spec:
  group: hostile.example.org
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
`

// goodStream is a valid Provider package stream.
var goodStream = []byte(metaDoc + "---\n" + crdDoc)

// pkgFile is package.yaml holding goodStream.
var pkgFile = fixture.File{Name: fixture.StreamFile, Body: goodStream}
