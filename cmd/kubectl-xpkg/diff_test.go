package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestDiffAcrossSourceKinds compares a registry image with a tarball, and
// a directory with itself in another form, through the real registry.
func TestDiffAcrossSourceKinds(t *testing.T) {
	env := testenv.Get(t)
	old, _ := pushSample(t, env, "provider-nop", "v0.2.1")
	stream, err := source.DirStream(sampleDir(t, "provider-nop", "v0.4.0"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := fixture.Image(stream)
	if err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "provider-nop.xpkg")
	if err := fixture.WriteTarball(tarball, "example.org/provider-nop:v0.4.0", img); err != nil {
		t.Fatal(err)
	}
	x := clitest.New(t).WithEnv(env)

	r := x.Run("diff", old, tarball).Fails(t, 3)
	contains(t, "sources", r.Stderr, "Reading registry "+old, "Reading tarball "+tarball)
	contains(t, "report", r.Stdout,
		"1 object changed, 1 added, 0 removed, 0 unchanged; 9 changes: 1 breaking, 8 compatible",
		"CustomResourceDefinition nopresources.nop.crossplane.io (changed)",
		"BREAKING    v1alpha1 spec.providerRef: field removed",
		"ValidatingWebhookConfiguration validating-webhook-configuration (added)")
	if strings.Contains(r.Stdout, "\x1b[") {
		t.Error("colour written to a pipe")
	}

	same := x.Run("diff", sampleDir(t, "provider-nop", "v0.4.0"), tarball).Succeeds(t)
	contains(t, "same", same.Stdout, "no differences (2 objects)")

	r = x.Run("diff", old, tarball, "-o", "json", "--breaking-only").Fails(t, 3)
	var rep diff.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if rep.Summary.Breaking != 1 || rep.Summary.Changes != 9 || len(rep.Objects) != 1 || len(rep.Objects[0].Changes) != 1 ||
		rep.Objects[0].Changes[0].Rule != diff.RuleFieldRemoved || rep.Objects[0].Changes[0].Path != "spec.providerRef" {
		t.Errorf("--breaking-only report: %+v", rep)
	}
	if rep.Old.Reference == "" || rep.Old.Digest == "" || rep.New.Source != tarball {
		t.Errorf("sides: %+v %+v", rep.Old, rep.New)
	}
}

func TestDiffOutputsAndExitCodes(t *testing.T) {
	x := clitest.New(t)
	helm13, helm14 := sampleDir(t, "provider-helm", "v1.3.0"), sampleDir(t, "provider-helm", "v1.4.0")

	r := x.Run("diff", helm13, helm14).Fails(t, 1) // differences, none breaking
	contains(t, "compatible", r.Stdout, "v1beta1 spec.forProvider.ssaForceConflicts: field added (boolean)", "[field-added]")

	r = x.Run("diff", helm13, helm14, "--stat").Fails(t, 1)
	contains(t, "stat", r.Stdout, "5 objects changed", "CustomResourceDefinition releases.helm.crossplane.io", "3 changes")
	if strings.Contains(r.Stdout, "[field-added]") {
		t.Error("--stat printed the changes")
	}

	r = x.Run("diff", helm13, helm14, "--color=always").Fails(t, 1)
	contains(t, "colour", r.Stdout, "\x1b[32mcompatible\x1b[0m")
	cfg13, cfg23 := sampleDir(t, "configuration-aws-network", "v0.21.0"), sampleDir(t, "configuration-aws-network", "v0.23.0")
	r = x.Run("diff", cfg13, cfg23, "-o", "yaml").Fails(t, 3)
	contains(t, "yaml", r.Stdout, "rule: dependency-constraint-narrowed", "objects: []")

	x.Run("diff", helm13).Fails(t, 2)
	x.Run("diff", helm13, helm14, "--color=sometimes").Fails(t, 2)
	x.Run("diff", helm13, helm14, "--stat", "-o", "json").Fails(t, 2)
	x.Run("diff", helm13, helm14, "--no-such-flag").Fails(t, 2)
	r = x.Run("diff", helm13, filepath.Join(t.TempDir(), "missing")).Fails(t, 2)
	contains(t, "missing", r.Stderr, "missing")
}
