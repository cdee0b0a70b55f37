package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// DefaultCrossplaneVersion is the Crossplane release whose CRDs a new
// environment serves.
const DefaultCrossplaneVersion = "v2.3.4"

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CrossplaneModule is the Go module that ships a Crossplane release's CRDs.
func CrossplaneModule(version string) string {
	if strings.HasPrefix(version, "v0.") || strings.HasPrefix(version, "v1.") {
		return "github.com/crossplane/crossplane@" + version
	}
	major, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	return "github.com/crossplane/crossplane/v" + major + "@" + version
}

// CrossplaneCRDDir downloads a Crossplane release's module through the Go
// module proxy (a no-op when cached) and returns its CRD directory.
func CrossplaneCRDDir(ctx context.Context, version string) (string, error) {
	mod := CrossplaneModule(version)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir() // outside any module, so no go.mod is touched
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil || info.Error != "" || runErr != nil {
		return "", fmt.Errorf("go mod download %s: %v %s %s", mod, runErr, info.Error, strings.TrimSpace(stderr.String()))
	}
	// v1.x and later keep generated CRDs in cluster/crds; v0.x in a chart.
	for _, sub := range []string{"cluster/crds", "cluster/charts/crossplane-types/crds"} {
		dir := filepath.Join(info.Dir, sub)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, nil
		}
	}
	return "", fmt.Errorf("%s has no CRD directory", mod)
}

// ReadCRDs reads every CustomResourceDefinition in the YAML files of dir.
func ReadCRDs(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			switch o.GetAPIVersion() {
			case "apiextensions.k8s.io/v1":
			case "apiextensions.k8s.io/v1beta1":
				if o, err = crdToV1(o); err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
			default:
				return nil, fmt.Errorf("%s: CRD %s is %s, which no API server serves", f, o.GetName(), o.GetAPIVersion())
			}
			crds = append(crds, o)
		}
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRDs in %s", dir)
	}
	return crds, nil
}

func readObjects(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 64*1024)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// ApplyCRDs creates (or replaces) crds and waits until every one is
// Established, so that its kinds resolve as soon as this returns.
func ApplyCRDs(ctx context.Context, dc dynamic.Interface, crds []*unstructured.Unstructured) error {
	client := dc.Resource(crdGVR)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, crd := range crds {
		g.Go(func() error {
			_, err := client.Create(gctx, crd, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				var cur *unstructured.Unstructured
				if cur, err = client.Get(gctx, crd.GetName(), metav1.GetOptions{}); err == nil {
					crd = crd.DeepCopy()
					crd.SetResourceVersion(cur.GetResourceVersion())
					_, err = client.Update(gctx, crd, metav1.UpdateOptions{})
				}
			}
			if err != nil {
				return fmt.Errorf("apply CRD %s: %w", crd.GetName(), err)
			}
			return waitEstablished(gctx, client, crd.GetName())
		})
	}
	return g.Wait()
}

func waitEstablished(ctx context.Context, client dynamic.NamespaceableResourceInterface, name string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}
