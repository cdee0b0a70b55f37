// Package legacy translates a legacy Crossplane package — the `.registry/`
// tree of the Extensions and Packages v1 designs — into what the old package
// manager's "unpack" step produced: one packages.crossplane.io/v1alpha1
// Package record and the package's CustomResourceDefinitions, annotated with
// the packages.crossplane.io/* metadata.
//
// The tree it reads:
//
//	.registry/
//	├── app.yaml            required: package metadata, copied into Package spec
//	├── install.yaml        optional: one Deployment, the controller
//	├── rbac.yaml           optional (Extensions): the controller's RBAC rules
//	├── icon.svg|png|jpg|gif optional: the package icon
//	├── ui-schema.yaml      optional: UI metadata for every CRD
//	└── resources/ ...      any depth of directories holding
//	      group.yaml            metadata for the CRDs at or below its directory
//	      *resource.yaml        metadata for the CRD whose kind equals its id
//	      *crd.yaml             one or more CRDs
//	      [kind[.version].]icon.<ext>       icon, optionally for one kind
//	      [kind[.version].]ui-schema.yaml   UI metadata, optionally for one kind
//
// Where the design documents leave room, this package decides as follows
// (each choice is repeated where it is implemented):
//
//   - app.yaml, install.yaml and rbac.yaml count only at the root. Directory
//     names are arbitrary; group, kind and version come from the CRDs.
//     Metadata files apply to CRDs in their own directory and below, and a
//     kind prefix matches the CRD's kind case-insensitively ("mytype" for
//     kind Mytype, as in the design's example).
//   - group.yaml, *resource.yaml and icons: the nearest directory wins. Within
//     one directory a kind.version-prefixed icon beats a kind-prefixed one,
//     which beats a plain icon.<ext>; then svg > png > jpg/jpeg > gif. The
//     root icon is therefore the fallback icon of every CRD.
//   - ui-schema: every applicable file is concatenated as a multi-document
//     YAML ("---" between documents), from the root down to the CRD's
//     directory, within a directory plain before kind before kind.version.
//     The value ends in a newline, as the design's annotated-CRD example shows.
//   - resource.yaml's short overview is read from "overviewShort", the key its
//     example uses; the annotation table's "shortOverview" is accepted too.
//   - A metadata value that is empty or absent sets no annotation. A value
//     from a file replaces a pre-annotated one (with a warning); ui-schema
//     files are appended after a pre-annotated ui-schema instead.
//   - app.yaml's version may be omitted: it is then taken from the tag of
//     Options.Image. A version that differs from that tag is only a warning:
//     the old package manager never enforced the match.
//   - Only the preferred root icon goes into Package spec.icons.
//   - CRDs are told apart by group, kind and version, so one CRD name may
//     appear in several files when each holds other versions, as in the
//     design's mysql/v1alpha1 and mysql/v1beta1 layout.
//
// Work is bounded for hostile input: see MaxFileSize, MaxTotalSize, MaxFiles
// and MaxCRDs. Nothing outside the fs.FS is read and symbolic links are never
// followed.
package legacy

// DefaultRoot is where a legacy package keeps its tree.
const DefaultRoot = ".registry"

// Bounds on the work one Translate call does.
const (
	// MaxFileSize caps any single file read from the tree (16 MiB): the
	// design expects packages of a few KB of YAML plus small icons.
	MaxFileSize int64 = 16 << 20
	// MaxTotalSize caps the bytes read from the whole tree.
	MaxTotalSize int64 = 64 << 20
	// MaxFiles caps the directory entries walked.
	MaxFiles = 10000
	// MaxCRDs caps the CRDs one package may hold; each may carry up to
	// maxAnnotationBytes of annotations, so this also bounds the output.
	MaxCRDs = 1000
	// maxAnnotationBytes is Kubernetes' limit on the total size of an
	// object's annotations (apimachinery's TotalAnnotationSizeLimitB); a CRD
	// over it could never be installed.
	maxAnnotationBytes = 256 << 10
)

// The Package record's type.
const (
	PackageAPIVersion = "packages.crossplane.io/v1alpha1"
	PackageKind       = "Package"
)

// The label every translated CRD gets.
const (
	LabelManagedBy           = "app.kubernetes.io/managed-by"
	LabelValuePackageManager = "package-manager"
)

// The CRD annotations of the Packages v1 annotation table.
const (
	AnnotationPackageTitle          = "packages.crossplane.io/package-title"
	AnnotationGroupTitle            = "packages.crossplane.io/group-title"
	AnnotationGroupOverview         = "packages.crossplane.io/group-overview"
	AnnotationGroupOverviewShort    = "packages.crossplane.io/group-overview-short"
	AnnotationGroupReadme           = "packages.crossplane.io/group-readme"
	AnnotationResourceCategory      = "packages.crossplane.io/resource-category"
	AnnotationResourceTitle         = "packages.crossplane.io/resource-title"
	AnnotationResourceTitlePlural   = "packages.crossplane.io/resource-title-plural"
	AnnotationResourceOverview      = "packages.crossplane.io/resource-overview"
	AnnotationResourceOverviewShort = "packages.crossplane.io/resource-overview-short"
	AnnotationResourceReadme        = "packages.crossplane.io/resource-readme"
	AnnotationUISchema              = "packages.crossplane.io/ui-schema"
	AnnotationIconDataURI           = "packages.crossplane.io/icon-data-uri"
)
