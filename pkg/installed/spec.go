package installed

// InstallSpec is what the user asked to install. Pointer and nil fields
// were not set: they are not sent, so that the API server defaults them.
type InstallSpec struct {
	Kind      string
	Name      string
	Namespace string
	// Package is the fully qualified image reference; Typed the reference
	// as the user typed it (v0.x requests keep the registry apart).
	Package string
	Typed   string

	ActivationPolicy            *string
	HistoryLimit                *int64
	PullSecrets                 []string
	PullPolicy                  *string
	RuntimeConfig               *string
	IgnoreCrossplaneConstraints *bool
	SkipDependencyResolution    *bool
	CommonLabels                map[string]string
	CommonAnnotations           map[string]string

	// Legacy generations.
	Source                    string
	CRD                       string
	ServiceAccountAnnotations map[string]string
}
