package source

import (
	"bytes"
	"fmt"
	"io"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg/legacy"
)

// Content is the package as a package stream: package.yaml as read, or, for
// a legacy package, the Package record and annotated CRDs its .registry/
// tree translates to (whose warnings join Notes).
func (p *Package) Content() (io.Reader, error) {
	if p.stream != nil {
		return p.stream, nil
	}
	if p.legacy == nil {
		return nil, fmt.Errorf("%s: package has no content", p.Source)
	}
	res, err := legacy.Translate(p.legacy, legacy.Options{Image: p.Reference})
	if err != nil {
		return nil, fmt.Errorf("%s: legacy package: %w", p.Source, err)
	}
	for _, w := range res.Warnings {
		p.Notes = append(p.Notes, "legacy: "+w)
	}
	var buf bytes.Buffer
	if err := res.WriteYAML(&buf); err != nil {
		return nil, err
	}
	return &buf, nil
}
