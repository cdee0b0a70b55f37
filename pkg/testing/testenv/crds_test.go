package testenv

import "testing"

func TestCrossplaneModule(t *testing.T) {
	for version, want := range map[string]string{
		"v2.3.4":  "github.com/crossplane/crossplane/v2@v2.3.4",
		"v1.20.0": "github.com/crossplane/crossplane@v1.20.0",
		"v0.11.0": "github.com/crossplane/crossplane@v0.11.0",
	} {
		if got := CrossplaneModule(version); got != want {
			t.Errorf("CrossplaneModule(%s) = %s, want %s", version, got, want)
		}
	}
}
