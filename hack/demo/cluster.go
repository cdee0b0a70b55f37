package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// cluster reads the cluster's state behind the plugin's back, to check
// that each step did what it says.
type cluster struct{ dyn dynamic.Interface }

// kinds are the package kinds and their revisions, as the plugin names
// them in KIND/NAME.
var kinds = map[string][2]schema.GroupVersionResource{
	"configuration": {crossplane.ConfigurationGVR, crossplane.ConfigurationRevisionGVR},
	"provider":      {crossplane.ProviderGVR, crossplane.ProviderRevisionGVR},
	"function":      {crossplane.FunctionGVR, crossplane.FunctionRevisionGVR},
}

func newCluster(env *testenv.Env) (cluster, error) {
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	return cluster{dyn: dyn}, err
}

// get returns the package KIND/NAME, or nil when there is none.
func (c cluster) get(ref string) (*unstructured.Unstructured, error) {
	kind, name, _ := strings.Cut(ref, "/")
	gvrs, ok := kinds[kind]
	if !ok {
		return nil, fmt.Errorf("unknown package kind in %q", ref)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := c.dyn.Resource(gvrs[0]).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// healthy says which of the packages is not Installed and Healthy at the
// image its spec names.
func (c cluster) healthy(refs ...string) error {
	var errs []error
	for _, ref := range refs {
		u, err := c.get(ref)
		switch {
		case err != nil:
			errs = append(errs, err)
		case u == nil:
			errs = append(errs, fmt.Errorf("%s does not exist", ref))
		default:
			if err := crossplane.PackageReady(u); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", ref, err))
			}
		}
	}
	return errors.Join(errs...)
}

// runs says whether the package is Healthy at exactly the image ref.
func (c cluster) runs(pkg, image string) error {
	u, err := c.get(pkg)
	if err != nil || u == nil {
		return errors.Join(err, c.healthy(pkg))
	}
	if spec, _, _ := unstructured.NestedString(u.Object, "spec", "package"); spec != image {
		return fmt.Errorf("%s: spec.package is %s, want %s", pkg, spec, image)
	}
	return c.healthy(pkg)
}

// spec is the image the package's spec names.
func (c cluster) spec(pkg string) (string, error) {
	u, err := c.get(pkg)
	if err != nil || u == nil {
		return "", errors.Join(err, fmt.Errorf("%s does not exist", pkg))
	}
	s, _, _ := unstructured.NestedString(u.Object, "spec", "package")
	return s, nil
}

// gone says which of the packages, or of their revisions, still exists.
func (c cluster) gone(refs ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for _, ref := range refs {
		kind, name, _ := strings.Cut(ref, "/")
		u, err := c.get(ref)
		if err != nil {
			errs = append(errs, err)
		} else if u != nil {
			errs = append(errs, fmt.Errorf("%s still exists", ref))
		}
		revs, err := c.dyn.Resource(kinds[kind][1]).List(ctx, metav1.ListOptions{LabelSelector: crossplane.LabelPackage + "=" + name})
		if err != nil {
			errs = append(errs, err)
		} else if n := len(revs.Items); n > 0 {
			errs = append(errs, fmt.Errorf("%s still has %d revisions", ref, n))
		}
	}
	return errors.Join(errs...)
}

// packages lists every package in the cluster as KIND/NAME.
func (c cluster) packages() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	for _, kind := range []string{"configuration", "provider", "function"} {
		list, err := c.dyn.Resource(kinds[kind][0]).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, u := range list.Items {
			out = append(out, kind+"/"+u.GetName())
		}
	}
	return out, nil
}

// only says whether the cluster holds exactly the packages refs.
func (c cluster) only(refs ...string) error {
	got, err := c.packages()
	if err != nil {
		return err
	}
	if strings.Join(got, " ") != strings.Join(refs, " ") {
		return fmt.Errorf("the cluster holds [%s], want [%s]", strings.Join(got, " "), strings.Join(refs, " "))
	}
	return nil
}
