package testenv

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Registry is a running OCI registry (the CNCF distribution registry, v3)
// with htpasswd auth.
type Registry struct {
	// Host is host:port, e.g. 127.0.0.1:41234; references are Host/repo:tag.
	Host     string `json:"host"`
	Username string `json:"username"`
	Password string `json:"password"`
	// DockerConfig is a directory whose config.json holds the credentials:
	// point DOCKER_CONFIG at it and authn.DefaultKeychain finds them.
	DockerConfig string `json:"dockerConfig"`
}

const registryConfig = `version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  secret: %s
auth:
  htpasswd:
    realm: kubectl-xpkg-test
    path: %s
`

// startRegistry runs the registry on a reserved port, returned for the
// caller to release once the registry is stopped.
func startRegistry(ctx context.Context, dir, bin string, detached bool) (*process, []*Port, *Registry, error) {
	reg := &Registry{
		Username:     "xpkg",
		Password:     randomString(16),
		DockerConfig: filepath.Join(dir, "docker"),
	}
	// bcrypt's minimum cost: the default makes every request cost ~0.2 s.
	hash, err := bcrypt.GenerateFromPassword([]byte(reg.Password), bcrypt.MinCost)
	if err != nil {
		return nil, nil, nil, err
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, fmt.Appendf(nil, "%s:%s\n", reg.Username, hash), 0o600); err != nil {
		return nil, nil, nil, err
	}
	p, ports, err := startOnPorts(1, func(ports []int) (*process, error) {
		reg.Host = "127.0.0.1:" + strconv.Itoa(ports[0])
		cfgPath := filepath.Join(dir, "registry.yaml")
		cfg := fmt.Sprintf(registryConfig, filepath.Join(dir, "registry-data"), reg.Host, randomString(16), htpasswd)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return nil, err
		}
		if err := WriteDockerConfig(reg.DockerConfig, reg.Host, reg.Username, reg.Password); err != nil {
			return nil, err
		}
		// The registry exports traces to an OTLP collector unless told not
		// to; there is none here, and each failed export would be logged.
		env := append(os.Environ(), "OTEL_TRACES_EXPORTER=none")
		p, err := startProcessEnv(dir, "registry", bin, []string{"serve", cfgPath}, env, detached)
		if err != nil {
			return nil, err
		}
		httpc := &http.Client{Timeout: time.Second}
		return p, p.waitReady(ctx, StartBound, func(ctx context.Context) bool {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+reg.Host+"/v2/", nil)
			resp, err := httpc.Do(req)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusUnauthorized
		})
	})
	return p, ports, reg, err
}

// WriteDockerConfig writes <dir>/config.json with basic-auth credentials for
// host, the file `docker login` would write.
func WriteDockerConfig(dir, host, user, password string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	b, err := json.MarshalIndent(map[string]any{
		"auths": map[string]any{host: map[string]string{"auth": auth}},
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600)
}

func randomString(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StartRegistry starts another registry (with its own credentials, in
// its DockerConfig) for t; it stops when t ends.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	reg, stop, err := StartRegistryIn(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	return reg
}

// StartRegistryIn starts a registry alone (no API server), its data,
// credentials and log in dir; stop ends it.
func StartRegistryIn(ctx context.Context, dir string) (reg *Registry, stop func() error, err error) {
	bin, err := DefaultRegistryBin()
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return nil, nil, err
	}
	p, ports, reg, err := startRegistry(ctx, dir, bin, false)
	stop = func() error {
		defer releasePorts(ports)
		if p == nil {
			return nil
		}
		return stopPID(p.pid, bin)
	}
	if err != nil {
		_ = stop()
		return nil, nil, err
	}
	return reg, stop, nil
}
