package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/compare"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

func sampleDir(name, tag string) string {
	return filepath.Join("..", "..", "hack", "testdata", "packages", name, tag)
}

// parsed is a sample release parsed whole: the reference.
func parsed(t *testing.T, name, tag string) *xpkg.Package {
	t.Helper()
	b, err := fixture.Stream(sampleDir(name, tag))
	if err != nil {
		t.Fatal(err)
	}
	p, err := xpkg.Parse(bytes.NewReader(b), xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkPlanInput reads args with ForPlan and with Stream, and holds
// ForPlan to Stream's report and to the definitions and meta object of
// the packages parsed whole.
func checkPlanInput(t *testing.T, args [2]string, old, new *xpkg.Package) *compare.PlanInput {
	t.Helper()
	ctx := context.Background()
	in, err := compare.ForPlan(ctx, args, [2]source.Options{}, xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	r, infos, err := compare.Stream(ctx, args, [2]source.Options{}, xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(t, in.Report), jsonOf(t, r); got != want {
		t.Errorf("report:\n%s\nwant Stream's:\n%s", got, want)
	}
	if !reflect.DeepEqual(in.Infos, infos) || in.Report.Old.Source != args[0] || in.Report.New.Source != args[1] {
		t.Errorf("infos %+v and sides %+v %+v, want %+v", in.Infos, in.Report.Old, in.Report.New, infos)
	}
	if want := diff.DefinitionsOf(old); len(want) == 0 || !reflect.DeepEqual(in.Old, want) {
		t.Errorf("old definitions:\n%v\nwant:\n%v", in.Old, want)
	}
	if want := diff.DefinitionsOf(new); !reflect.DeepEqual(in.New, want) {
		t.Errorf("new definitions:\n%v\nwant:\n%v", in.New, want)
	}
	if in.Meta == nil || in.Meta.Name() != new.Meta.Name() || in.Meta.Kind != new.Meta.Kind ||
		in.Meta.Crossplane != new.Meta.Crossplane || !reflect.DeepEqual(in.Meta.DependsOn, new.Meta.DependsOn) {
		t.Errorf("meta %+v, want %+v", in.Meta, new.Meta)
	}
	return in
}

// TestForPlanReadsDirectories: package source directories, read for a
// plan, give Stream's report and the parsed packages' definitions and
// meta object (an XRD, and dependencies, among them).
func TestForPlanReadsDirectories(t *testing.T) {
	for _, c := range [][3]string{
		{"configuration-aws-network", "v0.21.0", "v0.23.0"},
		{"provider-kubernetes", "v1.0.0", "v0.18.0"},
	} {
		t.Run(c[0], func(t *testing.T) {
			args := [2]string{sampleDir(c[0], c[1]), sampleDir(c[0], c[2])}
			in := checkPlanInput(t, args, parsed(t, c[0], c[1]), parsed(t, c[0], c[2]))
			if in.Infos[0].Type != source.TypeDirectory {
				t.Errorf("read as %s", in.Infos[0].Type)
			}
			if c[0] != "configuration-aws-network" {
				return
			}
			want := []diff.DefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true}}
			if crd := "xnetworks.aws.platform.upbound.io"; !reflect.DeepEqual(in.New[crd], want) {
				t.Errorf("%s: %v, want %v", crd, in.New[crd], want)
			}
			if len(in.Meta.DependsOn) != 4 || in.Meta.Crossplane != ">=v1.14.1-0" {
				t.Errorf("meta %+v", in.Meta)
			}
		})
	}
}

// TestForPlanReadsFiles: the same from .xpkg files, whose digests the
// report names.
func TestForPlanReadsFiles(t *testing.T) {
	const name = "provider-nop"
	var args [2]string
	for i, tag := range []string{"v0.2.1", "v0.4.0"} {
		b, err := fixture.Stream(sampleDir(name, tag))
		if err != nil {
			t.Fatal(err)
		}
		img, err := fixture.Image(b)
		if err != nil {
			t.Fatal(err)
		}
		args[i] = filepath.Join(t.TempDir(), name+"-"+tag+".xpkg")
		if err := fixture.WriteTarball(args[i], "example.org/"+name+":"+tag, img); err != nil {
			t.Fatal(err)
		}
	}
	in := checkPlanInput(t, args, parsed(t, name, "v0.2.1"), parsed(t, name, "v0.4.0"))
	if in.Infos[1].Type != source.TypeTarball || in.Report.New.Digest == "" || in.Report.New.Digest != in.Infos[1].Digest {
		t.Errorf("info %+v, report side %+v", in.Infos[1], in.Report.New)
	}
}

// TestForPlanFailsOnABadDocument: a document that does not decode fails
// the plan's read, naming the package.
func TestForPlanFailsOnABadDocument(t *testing.T) {
	dir := t.TempDir()
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"
	for file, body := range map[string]string{fixture.MetaFile: meta, "bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [\n"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := compare.ForPlan(context.Background(), [2]string{sampleDir("provider-nop", "v0.4.0"), dir}, [2]source.Options{}, xpkg.DefaultLimits)
	if err == nil || !strings.HasPrefix(err.Error(), "new package: ") {
		t.Errorf("error %v, want one about the new package", err)
	}
}
