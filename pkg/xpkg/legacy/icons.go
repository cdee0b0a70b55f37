package legacy

import (
	"bytes"
	"encoding/base64"
	"path"
	"strings"
)

// icon is an icon file and the CRDs it may apply to.
type icon struct {
	f         *file
	scope     scope
	mediaType string
	rank      int    // format preference: higher wins
	uri       string // the file as a data URI, built once for every CRD to share
}

// iconName splits "icon.svg" into ("", "svg") and "mytype.icon.svg" into
// ("mytype", "svg"). Other names are not icons.
func iconName(base string) (prefix, ext string, ok bool) {
	ext = path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if ext == "" {
		return "", "", false
	}
	if stem == "icon" {
		return "", ext[1:], true
	}
	if prefix, found := strings.CutSuffix(stem, ".icon"); found && prefix != "" {
		return prefix, ext[1:], true
	}
	return "", "", false
}

func isIconName(base string) bool {
	_, _, ok := iconName(base)
	return ok
}

// iconFormat maps an icon's extension to its media type and to the design's
// preference: svg, png, jpg, gif in that order. jpeg is taken as jpg.
func iconFormat(ext string) (mediaType string, rank int, ok bool) {
	switch strings.ToLower(ext) {
	case "svg":
		return "image/svg+xml", 4, true
	case "png":
		return "image/png", 3, true
	case "jpg", "jpeg":
		return "image/jpeg", 2, true
	case "gif":
		return "image/gif", 1, true
	}
	return "", 0, false
}

// newIcon reads an icon file; it returns nil, with a warning, for an icon
// that cannot be used.
func newIcon(f *file, warn *warnings) *icon {
	prefix, ext, _ := iconName(f.base())
	mediaType, rank, ok := iconFormat(ext)
	if !ok {
		warn.add(f.name, "icon format %q is not one of svg, png, jpg, gif; ignored", ext)
		return nil
	}
	sc, ok := newScope(f.dir(), prefix)
	if !ok {
		warn.add(f.name, "icon name is not [kind[.version].]icon.%s; ignored", ext)
		return nil
	}
	if len(f.data) == 0 {
		warn.add(f.name, "empty icon; ignored")
		return nil
	}
	if !looksLike(mediaType, f.data) {
		warn.add(f.name, "content does not look like %s", mediaType)
	}
	uri := "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(f.data)
	return &icon{f: f, scope: sc, mediaType: mediaType, rank: rank, uri: uri}
}

// looksLike checks an icon's leading bytes against its format, to catch a
// misnamed file early; a mismatch is only a warning, the data is kept.
func looksLike(mediaType string, data []byte) bool {
	switch mediaType {
	case "image/png":
		return bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n"))
	case "image/jpeg":
		return bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff})
	case "image/gif":
		return bytes.HasPrefix(data, []byte("GIF8"))
	}
	return bytes.Contains(data, []byte("<svg"))
}

// dataURI is the icon as an RFC 2397 data URI in base64, as the design
// prefers for the icon-data-uri annotation.
func (ic *icon) dataURI() string { return ic.uri }

// base64 is the icon's data in standard base64, as Package spec.icons holds it.
func (ic *icon) base64() string {
	return strings.TrimPrefix(ic.uri, "data:"+ic.mediaType+";base64,")
}

// better reports whether ic should be used over other when both apply in the same
// directory: the more specific name first (kind.version, then kind, then
// none), then the preferred format, then the lexically first file name.
func (ic *icon) better(other *icon) bool {
	if ic.scope.specificity() != other.scope.specificity() {
		return ic.scope.specificity() > other.scope.specificity()
	}
	if ic.rank != other.rank {
		return ic.rank > other.rank
	}
	return ic.f.rel < other.f.rel
}

// packageIcon is the preferred plain icon at the root of the tree, the
// icon of the package itself.
func packageIcon(icons []*icon) *icon {
	var best *icon
	for _, ic := range icons {
		if ic.scope.dir == "." && ic.scope.kind == "" && (best == nil || ic.better(best)) {
			best = ic
		}
	}
	return best
}
