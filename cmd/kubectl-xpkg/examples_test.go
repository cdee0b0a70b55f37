package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
	"github.com/kubectl-xpkg/kubectl-xpkg/plugin"
)

// How the examples map onto the local environment. The public registry is
// the test registry: publicRegistry in a line becomes its host, and
// $XPKG_REGISTRY points unqualified references at it; every sample is
// pushed there under the same crossplane-contrib/<name>:<tag> paths. The
// examples run in the session's working directory, where the files they
// name are made first, and against a cluster where the packages they name
// are installed first, with the stand-in package manager answering.
const publicRegistry = "xpkg.crossplane.io"

// mirrorRegistry, where mirror's examples copy to, is a second local
// registry.
const mirrorRegistry = "registry.example.com"

// exampleFiles are the local files the examples name, as a sample
// directory, image tarball or OCI layout of a sample (<name>/<tag>).
var exampleFiles = []struct{ name, form, sample string }{
	{"package", "dir", "provider-nop/v0.4.0"},
	{"my-package", "dir", "provider-nop/v0.4.0"},
	{"provider-nop.xpkg", "tarball", "provider-nop/v0.4.0"},
	{"layout", "layout", "provider-nop/v0.4.0"},
	{"old.xpkg", "tarball", "provider-helm/v1.3.0"},
	{"new.xpkg", "tarball", "provider-helm/v1.4.0"},
}

// examplePackage is an installed package an example names.
type examplePackage struct {
	kind, name, sample string // sample: <name>:<tag> in crossplane-contrib/
	manual             bool   // installed with --manual-activation
	upgradeTo          string // then upgraded to this version, for a revision to go back to
}

var (
	nopOld      = examplePackage{"provider", "provider-nop", "provider-nop:v0.2.1", false, ""}
	nopNew      = examplePackage{"provider", "provider-nop", "provider-nop:v0.4.0", false, ""}
	nopUpgraded = examplePackage{"provider", "provider-nop", "provider-nop:v0.2.1", false, "v0.4.0"}
	networkNew  = examplePackage{"configuration", "configuration-aws-network", "configuration-aws-network:v0.23.0", false, ""}
	networkOld  = examplePackage{"configuration", "configuration-aws-network", "configuration-aws-network:v0.21.0", true, ""}
	ptOld       = examplePackage{"function", "function-patch-and-transform", "function-patch-and-transform:v0.9.0", false, ""}
	// The package manager installs provider-nop as configuration-aws-network's
	// dependency (--with-dependencies removes only what it installed).
	installedSet = []examplePackage{networkNew, nopNew}
)

// exampleCluster is what each verb's examples expect installed, in order.
// Before every example what is missing is installed (again): each
// uninstall example finds its package.
var exampleCluster = map[string][]examplePackage{
	"diff": {nopOld}, "upgrade": {nopOld, networkOld, ptOld}, "rollback": {nopUpgraded},
	"get": installedSet, "describe": installedSet, "tree": installedSet, "uninstall": installedSet, "versions": installedSet,
	"outdated": {nopOld, networkNew}, "plan": {nopOld}, "mirror": installedSet,
}

// examplePackageNames are all the packages the examples install or name
// (the install examples create the last three), as KIND/NAME: the stand-in
// package manager answers them, and each verb's cleanup removes them.
// configuration-aws-network depends on provider-nop in its Lock entry.
var examplePackageNames = []string{"provider/provider-nop", "configuration/configuration-aws-network",
	"function/function-patch-and-transform", "provider/crossplane-contrib-provider-nop", "configuration/network",
	"function/crossplane-contrib-function-patch-and-transform"}

// skipExamples are the example lines that cannot run here, and why.
var skipExamples = map[string]string{
	// A rename waits for the real package manager to hand the objects
	// over (deactivation, release, control, the Lock), which the stand-in
	// does not do: TestRenameFamilyProvider (e2e) runs these forms against
	// Crossplane v2.3.4 and v2.4.2, and make demo renames a package away
	// and back.
	"kubectl xpkg rename provider/family-aws --dry-run":                          "needs the real package manager (e2e TestRenameFamilyProvider)",
	"kubectl xpkg rename provider/family-aws --yes":                              "needs the real package manager (e2e TestRenameFamilyProvider)",
	"kubectl xpkg rename function/fn-go-templating function-go-templating --yes": "needs the real package manager (make demo renames to a name of its own)",
}

// brokenExamples are example lines that do not work because of a reported
// bug in their verb. They still run: once one works, the test fails until
// its entry goes.
var brokenExamples = map[string]string{}

// exampleOutputs is what some examples must print (after any pipe) where
// the exit status alone does not show they do what their comment says;
// {registry} stands for the local registry.
var exampleOutputs = map[string]string{
	"kubectl xpkg describe provider/provider-nop":         "Package:            {registry}/crossplane-contrib/provider-nop:v0.4.0",
	"kubectl xpkg describe configuration-aws-network":     "Kind:               Configuration",
	"kubectl xpkg describe provider/provider-nop -o yaml": "- {registry}/crossplane-contrib/configuration-aws-network v0.23.0",
	"kubectl xpkg diff xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.2.1 xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0": "1 object changed, 1 added, 0 removed, 0 unchanged; 9 changes: 1 breaking, 8 compatible",
	"kubectl xpkg diff --installed provider-nop v0.4.0":                   "+++ Provider provider-nop from {registry}/crossplane-contrib/provider-nop:v0.4.0@sha256:66fa8fa653e9",
	"kubectl xpkg diff ./package ./provider-nop.xpkg":                     "no differences (2 objects)",
	"kubectl xpkg diff --breaking-only old.xpkg new.xpkg || [ $? -eq 1 ]": "8 changes: 0 breaking, 8 compatible",
	"kubectl xpkg diff old.xpkg new.xpkg -o json":                         `"source": "old.xpkg"`,
	"kubectl xpkg diff old.xpkg new.xpkg --stat":                          "CustomResourceDefinition clusterproviderconfigs.helm.m.crossplane.io  changed  1 change",
	"kubectl xpkg extract crossplane-contrib/provider-nop:v0.4.0":         "kind: CustomResourceDefinition",
	"kubectl xpkg get":                               "v0.4.0    True        True      provider-nop-66fa8fa653e9",
	"kubectl xpkg get providers -o wide":             "RUNTIME-CONFIG   RUNTIME",
	"kubectl xpkg get provider provider-nop -o yaml": "package: {registry}/crossplane-contrib/provider-nop:v0.4.0",
	"kubectl xpkg get provider provider-nop -o jsonpath='{.status.currentRevision}'":                                      "provider-nop-66fa8fa653e9",
	"kubectl xpkg install xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0 --wait":                               "provider.pkg.crossplane.io/crossplane-contrib-provider-nop created",
	"kubectl xpkg install configuration crossplane-contrib/configuration-aws-network:v0.23.0 network --manual-activation": "configuration.pkg.crossplane.io/network created",
	"kubectl xpkg tree": "└── provider/provider-nop {registry}/crossplane-contrib/provider-nop v0.4.0 (wants >=v0.2.0) [installed: True, healthy: True]",
	"kubectl xpkg uninstall configuration-aws-network --wait":                                                                   "configuration/configuration-aws-network deleted",
	"kubectl xpkg uninstall configuration-aws-network --with-dependencies --dry-run":                                            "Plan: uninstall configuration/configuration-aws-network, provider/provider-nop",
	"kubectl xpkg upgrade provider-nop --wait":                                                                                  "provider/provider-nop upgraded from v0.2.1 to v0.4.0",
	"kubectl xpkg upgrade function-patch-and-transform sha256:bfc07109d1d45ac6448e51d47060d20f30356ccc152ecec78c1b7721ebd05746": "function/function-patch-and-transform upgraded from v0.9.0 to sha256:bfc07109d1d45ac6448e51d47060d20f30356ccc152ecec78c1b7721ebd05746",
	"kubectl xpkg upgrade configuration-aws-network --activate --wait":                                                          "activated",
	"kubectl xpkg upgrade configuration-aws-network v0.23.0 --activate --wait":                                                  "configuration/configuration-aws-network upgraded from v0.21.0 to v0.23.0",
	"kubectl xpkg validate xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0":                                           "{registry}/crossplane-contrib/provider-nop:v0.4.0: valid Provider provider-nop (3 objects)",
	"kubectl xpkg validate ./package ./provider-nop.xpkg":                                                                       "2 packages checked: 2 valid, 0 invalid, 0 unreadable",
	"kubectl xpkg validate ./package -o json":                                                                                   `"source": "./package"`,
	"kubectl xpkg version":          "Crossplane package APIs:",
	"kubectl xpkg version --client": "Client Version: ",
	"kubectl xpkg version -o json":  `"clientVersion": {`,
	"kubectl xpkg versions xpkg.crossplane.io/crossplane-contrib/provider-helm --constraint '>=1.3 <2' --pre":       "v1.4.0\n",
	"kubectl xpkg install provider crossplane-contrib/provider-nop:v0.4.0 --dry-run=client -o yaml > provider.yaml": "package: {registry}/crossplane-contrib/provider-nop:v0.4.0",
	"kubectl xpkg versions crossplane-contrib/provider-nop":                                                         "v0.4.0    provider/provider-nop",
	"kubectl xpkg extract ./layout -o json | jq '.items[].metadata.name'":                                           `"nopresources.nop.crossplane.io"`,
	"kubectl xpkg uninstall configuration/configuration-aws-network --with-dependencies --yes":                      "provider/provider-nop deleted",
	"kubectl xpkg get -o custom-columns=NAME:.metadata.name,PACKAGE:.spec.package,REVISION:.status.currentRevision": "{registry}/crossplane-contrib/provider-nop:v0.4.0",
	"kubectl xpkg rollback provider-nop --dry-run":                                                                  "Plan: rollback provider/provider-nop from {registry}/crossplane-contrib/provider-nop:v0.4.0 to {registry}/crossplane-contrib/provider-nop:v0.2.1",
	"kubectl xpkg rollback provider-nop --wait":                                                                     "provider/provider-nop rolled back from v0.4.0 to v0.2.1",
	"kubectl xpkg rollback provider/provider-nop --to-revision 2":                                                   "provider/provider-nop rolled back from v0.2.1 to v0.4.0",
	"kubectl xpkg outdated":                                                              "provider-nop                Provider        v0.2.1    v0.4.0    v0.4.0    no",
	"kubectl xpkg outdated providers -o wide":                                            "{registry}/crossplane-contrib/provider-nop   sha256:9b9ba4e1e929173331ec85fd3151410e594d8903620e0297d910234e1d54c20b",
	"kubectl xpkg upgrade function-patch-and-transform v0.10.8 --pin":                    "function/function-patch-and-transform upgraded from sha256:bfc07109d1d45ac6448e51d47060d20f30356ccc152ecec78c1b7721ebd05746 to v0.10.8",
	"kubectl xpkg install crossplane-contrib/function-patch-and-transform:v0.10.8 --pin": "function.pkg.crossplane.io/crossplane-contrib-function-patch-and-transform created",
	"kubectl xpkg inspect xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0":     "Version:      v0.4.0",
	"kubectl xpkg inspect ./provider-nop.xpkg":                                           "Runtime:      the package image itself",
	"kubectl xpkg inspect crossplane-contrib/provider-nop:v0.4.0 -o json":                `"kind": "Provider"`,
	"kubectl xpkg outdated -o json":                                                      `"current": "v0.2.1"`,
	"kubectl xpkg doctor":                                                                " Lock entries read\n",
	"kubectl xpkg doctor -o json":                                                        `"findings": [`,
	"kubectl xpkg doctor --crossplane-version v2.4.2":                                    "Crossplane v2.3.4 (deployment crossplane-system/crossplane) → v2.4.2\nDoctor: ",
	"kubectl xpkg mirror xpkg.crossplane.io/crossplane-contrib/configuration-platform:v1.0.0 --to registry.example.com/crossplane > imageconfigs.yaml": "rewriteImage:",
	"kubectl xpkg mirror xpkg.crossplane.io/crossplane-contrib/configuration-platform:v1.0.0 --to registry.example.com/crossplane --dry-run":           "{registry}/crossplane-contrib/configuration-platform:v1.0.0 >=v0.2.0",
	"kubectl xpkg mirror --from-layout ./platform --to registry.example.com/crossplane --pull-secret mirror-creds":                                     "name: mirror-creds",
	"kubectl xpkg mirror --from-cluster --to registry.example.com/crossplane":                                                                          "prefix: {mirror}/crossplane/crossplane-contrib/provider-nop\n",
	"kubectl xpkg tree configuration-aws-network -o dot | dot -Tsvg > deps.svg":                                                                        "node {registry}/crossplane-contrib/provider-nop: {registry}/crossplane-contrib/provider-nop | v0.4.0",
}

// sampleRef is a sample reference in an example line.
var sampleRef = regexp.MustCompile(`crossplane-contrib/([a-z0-9-]+:v[0-9][0-9a-z.-]*)`)

// TestExamples runs every verb's Example lines through the built binary,
// in order, and checks each exits as documented.
func TestExamples(t *testing.T) {
	verbs := exampleVerbs(t)
	lines := map[string]bool{}
	for _, v := range verbs {
		for _, ex := range v {
			lines[ex.line] = true
		}
	}
	for _, table := range []map[string]string{skipExamples, brokenExamples, exampleOutputs} {
		for line := range table {
			if !lines[line] {
				t.Fatalf("%q is no example line (any more): update the tables", line)
			}
		}
	}
	e := newExampleEnv(t)
	for _, v := range verbs {
		t.Run(v[0].args[0], func(t *testing.T) {
			t.Cleanup(func() { e.uninstallAll(t) })
			for _, ex := range v {
				if why, ok := skipExamples[ex.line]; ok {
					t.Logf("skipped %q: %s", ex.line, why)
					continue
				}
				e.ensure(t, ex.args[0])
				err := e.run(t, ex)
				switch bug, broken := brokenExamples[ex.line]; {
				case broken && err == nil:
					t.Errorf("%s example %q works now: remove it from brokenExamples", ex.verb, ex.line)
				case broken:
					t.Logf("%s example %q fails, as known (%s): %v", ex.verb, ex.line, bug, err)
				case err != nil:
					t.Errorf("%s example %q: %v", ex.verb, ex.line, err)
				}
			}
		})
	}
}

// exampleVerbs reads the Example of every command in the tree (as the
// binary has it, with cobra's own help and completion, which have none).
func exampleVerbs(t *testing.T) [][]example {
	t.Helper()
	root := plugin.NewCmdRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var verbs [][]example
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			switch {
			case sub.Name() == "help" || sub.Name() == "completion":
				continue // cobra's own
			case sub.Example == "":
				t.Errorf("%s has no Example", sub.CommandPath())
			default:
				exs, err := parseExamples(sub.CommandPath(), sub.Example)
				if err != nil {
					t.Errorf("%s Example: %v", sub.CommandPath(), err)
				} else {
					verbs = append(verbs, exs)
				}
			}
			walk(sub)
		}
	}
	walk(root)
	if t.Failed() {
		t.FailNow()
	}
	return verbs
}

// staticKeychain answers every registry with one user and password.
type staticKeychain struct{ user, password string }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return &authn.Basic{Username: k.user, Password: k.password}, nil
}

// exampleEnv is the user's shell the examples run in.
type exampleEnv struct {
	*lifecycle
	x      *clitest.Test
	host   string
	mirror string // the second registry's host
	pushed map[string]bool
}

func newExampleEnv(t *testing.T) *exampleEnv {
	t.Helper()
	// mirror --from-cluster, outdated, doctor and get read every package:
	// the examples' cluster holds exactly the packages they install.
	testenv.Get(t).Quiet(t)
	l := newLifecycle(t)
	reg := l.env.RequireRegistry(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	refs, err := fixture.PushSamples(root, reg.Host, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password}))
	if err != nil {
		t.Fatal(err)
	}
	e := &exampleEnv{lifecycle: l, host: reg.Host, pushed: map[string]bool{}}
	for _, r := range refs {
		e.pushed[r] = true
	}
	dst := testenv.StartRegistry(t)
	e.mirror = dst.Host
	e.x = clitest.New(t).WithEnv(l.env).Setenv(source.RegistryEnvVar, reg.Host).WithLogin(dst.Host, dst.Username, dst.Password)
	// Revisions are named after image digests, as Crossplane names them,
	// so that outdated sees no drift where there is none.
	creds := source.Options{Keychain: authn.NewMultiKeychain(staticKeychain{reg.Username, reg.Password})}
	l.mgr.ResolveDigests(func(image string) (string, bool) {
		d, err := source.Digest(context.Background(), image, creds)
		return d, err == nil
	})
	for _, n := range examplePackageNames {
		var b pkgmanager.Behaviour
		if n == "configuration/configuration-aws-network" {
			b.DependsOn = []pkgmanager.Dependency{{Package: e.repo(nopNew.sample), Constraints: ">=v0.2.0", Type: "Provider",
				Install: e.host + "/crossplane-contrib/" + nopNew.sample, As: nopNew.name}}
		}
		l.mgr.Manage(strings.Split(n, "/")[1], b)
	}
	for _, f := range exampleFiles {
		e.makeFile(t, f.name, f.form, f.sample)
	}
	return e
}

// repo is the local repository of a sample "<name>[:<tag>]".
func (e *exampleEnv) repo(sample string) string {
	return e.host + "/crossplane-contrib/" + strings.Split(sample, ":")[0]
}

func (e *exampleEnv) makeFile(t *testing.T, name, form, sample string) {
	t.Helper()
	pkg, tag, _ := strings.Cut(sample, "/")
	dir := sampleDir(t, pkg, tag)
	path := filepath.Join(e.x.Home(), name)
	if form == "dir" {
		if err := os.CopyFS(path, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		return
	}
	stream, err := source.DirStream(dir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := fixture.Image(stream)
	if err == nil && form == "tarball" {
		err = fixture.WriteTarball(path, e.repo(pkg)+":"+tag, img)
	} else if err == nil {
		err = fixture.WriteLayout(path, img)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// run runs one example line and says how it fails to do what it
// documents.
func (e *exampleEnv) run(t *testing.T, ex example) error {
	t.Helper()
	args, err := e.localArgs(ex)
	if err != nil {
		return err
	}
	r := e.x.Run(args...)
	code := r.ExitCode
	if ex.orEq >= 0 && code != 0 { // || [ $? -eq N ]
		code = map[bool]int{true: 0, false: 1}[code == ex.orEq]
	}
	if code != ex.want {
		return fmt.Errorf("exit %d, documented %d\nran: %q\nstdout:\n%s\nstderr:\n%s", code, ex.want, args, r.Stdout, r.Stderr)
	}
	out := r.Stdout
	if ex.pipe != nil {
		if out, err = e.pipe(t, ex, out); err != nil {
			return err
		}
	}
	if want, ok := exampleOutputs[ex.line]; ok && !strings.Contains(out, strings.NewReplacer("{registry}", e.host, "{mirror}", e.mirror).Replace(want)) {
		return fmt.Errorf("output lacks %q:\n%s", want, out)
	}
	if ex.out == "" {
		return nil
	}
	if out == "" {
		return fmt.Errorf("nothing written to %s", ex.out)
	}
	return os.WriteFile(filepath.Join(e.x.Home(), ex.out), []byte(out), 0o644)
}

// localArgs maps the example's arguments onto the local registry, and
// refuses those that would reach another registry or name a sample that
// hack/testdata lacks.
func (e *exampleEnv) localArgs(ex example) ([]string, error) {
	var args []string
	for _, a := range ex.args {
		a = strings.ReplaceAll(strings.ReplaceAll(a, publicRegistry, e.host), mirrorRegistry, e.mirror)
		if first, _, ok := strings.Cut(a, "/"); ok && strings.ContainsAny(first, ".:") && first != e.host && first != e.mirror && !strings.HasPrefix(a, ".") {
			return nil, fmt.Errorf("%s would reach the network: map it onto the local registry", first)
		}
		args = append(args, a)
	}
	for _, m := range sampleRef.FindAllStringSubmatch(ex.line, -1) {
		if !e.pushed[e.host+"/crossplane-contrib/"+m[1]] {
			return nil, fmt.Errorf("hack/testdata has no sample %s: use a version it has", m[1])
		}
	}
	return args, nil
}

// pipe feeds out to the program after | as done in Go (pipePrograms),
// and returns what that wrote: the check is the same on every machine.
// Where the real program is installed, it runs too, with the example's own
// arguments, and must succeed; jq must also print the same.
func (e *exampleEnv) pipe(t *testing.T, ex example, out string) (string, error) {
	t.Helper()
	prog := ex.pipe[0]
	inGo, ok := pipePrograms[prog]
	if !ok {
		return "", fmt.Errorf("pipePrograms has no Go version of %s", prog)
	}
	got, err := inGo(ex.pipe[1:], out)
	if err != nil {
		return "", fmt.Errorf("%w; its input:\n%s", err, out)
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return got, nil
	}
	cmd := exec.Command(path, ex.pipe[1:]...)
	cmd.Dir, cmd.Stdin = e.x.Home(), strings.NewReader(out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	real, err := cmd.Output()
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %v\n%s", prog, err, stderr.String())
	case prog == "jq" && string(real) != got:
		return "", fmt.Errorf("jq printed %q, its Go version %q", real, got)
	}
	return got, nil
}

// ensure installs the packages the verb's examples name, where missing.
func (e *exampleEnv) ensure(t *testing.T, verb string) {
	t.Helper()
	if verb == "doctor" {
		// --crossplane-version reads the running release from Crossplane's
		// Deployment, which the test API server does not run.
		crossplaneDeployment(t, e.dyn, "crossplane-system", "v2.3.4")
	}
	if verb == "plan" {
		e.planManifests(t)
	}
	if verb == "activation" {
		e.compositions(t)
	}
	if verb == "mirror" {
		e.pushPlatform(t)
	}
	// What went must be collected before any install, lest its collection
	// hit a successor: one the package manager installs as a dependency too.
	for _, p := range exampleCluster[verb] {
		if !e.exists(t, p.kind, p.name) {
			e.awaitCollected(t, p)
		}
	}
	for _, p := range exampleCluster[verb] {
		if e.exists(t, p.kind, p.name) {
			continue
		}
		args := []string{"install", p.kind, e.host + "/crossplane-contrib/" + p.sample, p.name, "--wait=60s"}
		if p.manual {
			args[len(args)-1] = "--manual-activation"
		}
		e.x.Run(args...).Succeeds(t)
		if p.upgradeTo != "" {
			e.x.Run("upgrade", p.kind+"/"+p.name, p.upgradeTo, "--wait=60s").Succeeds(t)
		}
	}
	for _, p := range exampleCluster[verb] {
		if !p.manual {
			// One the package manager installed as a dependency was not waited for.
			awaitHealthy(t, e.dyn, schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: p.kind + "s"}, p.name)
		}
	}
}

func (e *exampleEnv) exists(t *testing.T, kind, name string) bool {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: kind + "s"}
	_, err := e.dyn.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// awaitCollected waits until an uninstalled package's revisions and Lock
// entry are gone, lest their collection hit its reinstalled successor.
func (e *exampleEnv) awaitCollected(t *testing.T, p examplePackage) {
	t.Helper()
	lockGVR := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		locked := false
		if lock, err := e.dyn.Resource(lockGVR).Get(context.Background(), "lock", metav1.GetOptions{}); err == nil {
			entries, _, _ := unstructured.NestedSlice(lock.Object, "packages")
			for _, entry := range entries {
				m, _ := entry.(map[string]any)
				locked = locked || m["source"] == e.repo(p.sample)
			}
		}
		if !locked && len(e.desiredStates(t, p.kind+"revisions", p.name)) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s: its revisions or Lock entry outlived it by a minute", p.kind, p.name)
		}
	}
}

// uninstallAll removes what a verb's examples installed.
func (e *exampleEnv) uninstallAll(t *testing.T) {
	t.Helper()
	args := []string{"uninstall", "--force", "--wait=60s"}
	for _, n := range examplePackageNames {
		if kind, name, _ := strings.Cut(n, "/"); e.exists(t, kind, name) {
			args = append(args, n)
		}
	}
	if len(args) > 3 {
		e.x.Run(args...).Succeeds(t)
	}
}

// pushPlatform pushes the configuration mirror's examples name:
// configuration-platform v1.0.0 needs provider-nop >=v0.2.0 and
// function-patch-and-transform >=v0.9.0, samples both.
func (e *exampleEnv) pushPlatform(t *testing.T) {
	t.Helper()
	ref := e.host + "/crossplane-contrib/configuration-platform:v1.0.0"
	if e.pushed[ref] {
		return
	}
	meta := fmt.Sprintf("apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: configuration-platform\nspec:\n  dependsOn:\n  - provider: %s\n    version: \">=v0.2.0\"\n  - function: %s\n    version: \">=v0.9.0\"\n",
		e.repo(nopNew.sample), e.repo(ptOld.sample))
	img, err := fixture.Image([]byte(meta))
	if err != nil {
		t.Fatal(err)
	}
	reg := e.env.RequireRegistry(t)
	if err := fixture.Push(ref, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
	e.pushed[ref] = true
}

// planManifests writes the manifests plan's examples name: packages/
// moves provider-nop to v0.4.0, base/packages/ has it at v0.2.1, as it
// runs (a pull request and its target branch).
func (e *exampleEnv) planManifests(t *testing.T) {
	t.Helper()
	for dir, tag := range map[string]string{"packages": "v0.4.0", "base/packages": "v0.2.1"} {
		if err := os.MkdirAll(filepath.Join(e.x.Home(), dir), 0o755); err != nil {
			t.Fatal(err)
		}
		m := "apiVersion: pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-nop\nspec:\n  package: " + e.host + "/crossplane-contrib/provider-nop:" + tag + "\n"
		if err := os.WriteFile(filepath.Join(e.x.Home(), dir, "provider-nop.yaml"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// compositions writes the Compositions activation plan's examples name:
// compositions/ holds one that composes provider-nop's kind.
func (e *exampleEnv) compositions(t *testing.T) {
	t.Helper()
	dir := filepath.Join(e.x.Home(), "compositions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := `apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: xnops
spec:
  compositeTypeRef: {apiVersion: example.org/v1alpha1, kind: XNop}
  mode: Pipeline
  pipeline:
  - step: patch-and-transform
    functionRef: {name: function-patch-and-transform}
    input:
      apiVersion: pt.fn.crossplane.io/v1beta1
      kind: Resources
      resources:
      - name: nop
        base: {apiVersion: nop.crossplane.io/v1alpha1, kind: NopResource}
`
	if err := os.WriteFile(filepath.Join(dir, "xnops.yaml"), []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
}
