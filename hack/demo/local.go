package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Time limits of the commands: local ones read a few megabytes at most;
// cluster ones with --wait=5m get that and a minute.
const (
	quick   = 2 * time.Minute
	waiting = 6 * time.Minute
	waitFor = "--wait=5m"
)

// journey is the session's story: the packages, where they are, and the
// cluster the checks read.
type journey struct {
	s       *session
	c       cluster
	host    string // the registry
	work    string // where extract writes, relative to the repository
	samples string // the real packages' source directories
}

// runJourney runs every step: first the local verbs, then the operator's
// journey through the cluster.
func runJourney(s *session, l *lab, dir string) error {
	c, err := newCluster(l.env)
	if err != nil {
		return err
	}
	j := &journey{s: s, c: c, host: l.host(), work: filepath.Join(dir, workSub), samples: "hack/testdata/packages"}
	j.version()
	j.validate()
	j.inspect()
	j.extractMeta()
	j.extractDir()
	j.diffRegistry()
	j.diffStat()
	j.mirror()
	j.cluster()
	return nil
}

// real is a whole sample package in the registry.
func (j *journey) real(name, tag string) string {
	return j.host + "/crossplane-contrib/" + name + ":" + tag
}

func (j *journey) version() {
	j.s.step("version",
		"Which build of the plugin is this, and which Crossplane package APIs does the cluster serve? The first question on a new cluster.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "version")
			if v.exit(r, 0, "the cluster answered") {
				v.says("stdout", r.stdout, "the plugin's version, the cluster's, and the package APIs it serves",
					"Client Version:", "Server Version:", "pkg.crossplane.io")
			}
		})
}

func (j *journey) validate() {
	j.s.step("validate",
		"Before a package is pushed or installed: does it follow the xpkg specification? Every violation is reported, not just the first.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "validate", j.real("provider-nop", "v0.4.0"), j.samples+"/configuration-aws-network/v0.23.0")
			if v.exit(r, 0, "every package valid") {
				v.says("stdout", r.stdout, "both packages reported valid", "provider-nop", "configuration-aws-network", "valid")
			}
		})
}

func (j *journey) inspect() {
	j.s.step("inspect",
		"One screen about a package, without writing its content: what it declares and holds, what runs it, and what its image says.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "inspect", j.real("provider-nop", "v0.4.0"))
			if v.exit(r, 0, "inspected") {
				v.says("stdout", r.stdout, "the provider, its version, its one CRD, its runtime and its base layer",
					"Kind:         Provider", "Version:      v0.4.0", "CustomResourceDefinition", "Runtime:", "Base layer:  sha256:")
			}
		})
}

func (j *journey) extractMeta() {
	j.s.step("extract --only meta",
		"What does a package say about itself (kind, Crossplane version constraint, dependencies) without installing it anywhere?",
		func(v *verdict) {
			r := j.s.xpkg(quick, "extract", j.real("configuration-aws-network", "v0.23.0"), "--only", "meta")
			if v.exit(r, 0, "extracted") {
				v.says("stdout", r.stdout, "prints the Configuration's metadata with its dependsOn",
					"kind: Configuration", "name: configuration-aws-network", "dependsOn:")
				if n := strings.Count("\n"+r.stdout, "\nkind: "); n != 1 {
					v.fail("stdout holds %d objects, want only the metadata", n)
				}
			}
		})
}

func (j *journey) extractDir() {
	dir := filepath.Join(j.work, "provider-nop-v0.4.0")
	j.s.step("extract -o DIR/",
		"One file per object, for browsing a package or reviewing it with git diff; written atomically: a failure leaves nothing behind.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "extract", j.real("provider-nop", "v0.4.0"), "-o", dir+"/")
			if !v.exit(r, 0, "extracted") {
				return
			}
			j.s.run(quick, "ls", "ls", []string{dir})
			files, err := os.ReadDir(dir)
			if err != nil {
				v.fail("%v", err)
				return
			}
			yaml := 0
			for _, f := range files {
				if strings.HasSuffix(f.Name(), ".yaml") {
					yaml++
				}
			}
			if yaml < 2 {
				v.fail("%s holds %d YAML files, want the metadata and the CRDs", dir, yaml)
				return
			}
			v.pass("%d files written, one per object", yaml)
		})
}

func (j *journey) diffRegistry() {
	j.s.step("diff",
		"Is provider-nop v0.2.1 to v0.4.0 a safe move? diff compares the releases object by object and names each breaking change (exit 3).",
		func(v *verdict) {
			r := j.s.xpkg(quick, "diff", j.real("provider-nop", "v0.2.1"), j.real("provider-nop", "v0.4.0"))
			if v.exit(r, 3, "breaking changes found") {
				v.says("stdout", r.stdout, "names the breaking changes and the rule behind each", "BREAKING", "[")
			}
		})
}

func (j *journey) diffStat() {
	dir := j.samples + "/provider-aws/"
	j.s.step("diff --stat --breaking-only",
		"provider-aws v0.50.0 to v0.58.0 changes about 200 CRDs: the summary, and only the objects whose changes break an upgrade.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "diff", "--stat", "--breaking-only", dir+"v0.50.0", dir+"v0.58.0")
			if !v.exit(r, 3, "breaking changes found") {
				return
			}
			v.says("stdout", r.stdout, "3 breaking changes among 356, in the 3 CRDs shown",
				"356 changes: 3 breaking", "dbinstances.docdb.aws.crossplane.io",
				"identityproviders.cognitoidentityprovider.aws.crossplane.io", "jobruns.emrcontainers.aws.crossplane.io")
			if n := strings.Count(r.stdout, "CustomResourceDefinition "); n != 3 {
				v.fail("%d objects listed, want only the 3 with breaking changes", n)
			}
		})
}

func (j *journey) mirror() {
	layout := filepath.Join(j.work, "air")
	j.s.step("mirror (across an air gap)",
		"configuration-aws-network v0.23.0 with everything it depends on, for a cluster that cannot reach this registry: "+
			"resolved as Crossplane's resolver would, copied whole into an OCI layout, then from the layout into a registry "+
			"(here a second path of the same one), with the ImageConfig that sends Crossplane there.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "mirror", j.e2e("configuration-aws-network", "v0.23.0"), "--to-layout", layout)
			if !v.exit(r, 0, "copied into the layout") {
				return
			}
			v.says("stderr", r.stderr, "the configuration, its provider and its function, each checked", "Mirrored 3 of 3 package(s) to the OCI layout ")
			r = j.s.xpkg(quick, "mirror", "--from-layout", layout, "--to", j.host+"/mirror")
			if !v.exit(r, 0, "copied into the registry") {
				return
			}
			v.says("stderr", r.stderr, "the three packages, each verified there by digest", "Mirrored 3 of 3 package(s) to "+j.host+"/mirror, each verified there by digest")
			v.says("stdout", r.stdout, "the ImageConfig rewriting the canonical references to the copies",
				"kind: ImageConfig", "prefix: "+j.host+"/e2e/crossplane-contrib/", "prefix: "+j.host+"/mirror/e2e/crossplane-contrib/")
		})
}
