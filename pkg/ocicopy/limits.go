package ocicopy

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Limits refuse hostile sources before they cost anything: each is checked
// before the manifest it bounds is fetched, where the parent's descriptor
// allows, and again as it is read.
type Limits struct {
	// MaxManifestBytes bounds each manifest or index (default 4 MiB).
	MaxManifestBytes int64
	// MaxDepth bounds the levels of nested indexes, the root index being
	// the first (default 4).
	MaxDepth int
	// MaxManifests bounds the manifests of one image's tree, the root
	// included (default 1024).
	MaxManifests int
	// MaxTotalManifestBytes bounds the manifests of one tree together,
	// which are held in memory until they are written (default 32 MiB).
	MaxTotalManifestBytes int64
}

// The defaults: generous for any real image (an xpkg has one to a few
// manifests of a few kilobytes), and a stop for hostile ones.
const (
	DefaultMaxManifestBytes      = 4 << 20
	DefaultMaxDepth              = 4
	DefaultMaxManifests          = 1024
	DefaultMaxTotalManifestBytes = 32 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxManifestBytes <= 0 {
		l.MaxManifestBytes = DefaultMaxManifestBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxManifests <= 0 {
		l.MaxManifests = DefaultMaxManifests
	}
	if l.MaxTotalManifestBytes <= 0 {
		l.MaxTotalManifestBytes = DefaultMaxTotalManifestBytes
	}
	return l
}

func tooLarge(d v1.Descriptor, limit int64) error {
	return fmt.Errorf("the manifest %s is %d bytes: refusing manifests over %d bytes (raise the manifest size limit if it is genuine)",
		d.Digest, d.Size, limit)
}

func tooDeep(d v1.Descriptor, level, limit int) error {
	return fmt.Errorf("the image index %s is nested %d levels deep: refusing more than %d levels of indexes (raise the nesting limit if it is genuine)",
		d.Digest, level, limit)
}

func tooMany(limit int) error {
	return fmt.Errorf("the image has more than %d manifests: refusing it (raise the manifest count limit if it is genuine)", limit)
}

func tooMuch(limit int64) error {
	return fmt.Errorf("the manifests of the image come to more than %d bytes: refusing it (raise the manifest size limit if it is genuine)", limit)
}

func cyclic(parent, child v1.Hash) error {
	return fmt.Errorf("the image index %s references %s, itself or an index above it: refusing a cyclic image", parent, child)
}
