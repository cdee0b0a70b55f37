package testenv

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRegistryNeedsNothingOnPATH starts the environment's registry with
// broken registry programs first on PATH: the one hack/build-registry.sh
// built must be the one that runs, and it must serve with auth.
func TestRegistryNeedsNothingOnPATH(t *testing.T) {
	bin, err := DefaultRegistryBin()
	if err != nil {
		if os.Getenv("XPKG_BINARY") != "" { // make test builds it first
			t.Fatal(err)
		}
		t.Skip(err)
	}
	stubs := t.TempDir()
	for _, name := range []string{"docker-registry", "registry"} {
		if err := os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/sh\nexit 127\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", stubs+string(os.PathListSeparator)+os.Getenv("PATH"))
	if again, err := DefaultRegistryBin(); err != nil || again != bin || strings.HasPrefix(again, stubs) {
		t.Fatalf("with stubs on PATH the registry is %q (%v), want %q", again, err, bin)
	}

	dir := t.TempDir()
	p, ports, reg, err := startRegistry(context.Background(), dir, bin, false)
	t.Cleanup(func() { releasePorts(ports) })
	if p != nil {
		t.Cleanup(func() { _ = stopPID(p.pid, bin) })
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, password string
		want           int
	}{{"", "", http.StatusUnauthorized}, {reg.Username, "wrong", http.StatusUnauthorized}, {reg.Username, reg.Password, http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+reg.Host+"/v2/_catalog", nil)
		if c.user != "" {
			req.SetBasicAuth(c.user, c.password)
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET /v2/_catalog as %q/%q: %s, want %d", c.user, c.password, resp.Status, c.want)
		}
	}
}
