package main

import (
	"os"
	"path/filepath"
	"strings"
)

// The packages of the operator's journey: the reduced e2e samples, whose
// dependsOn point at the lab's registry. The configuration gets the name
// install gives it by default, and its dependencies the names Crossplane
// gives them: the repository path as a DNS label.
const (
	cfgName = "e2e-crossplane-contrib-configuration-aws-network"
	nopName = "e2e-crossplane-contrib-provider-nop"
	ptName  = "e2e-crossplane-contrib-function-patch-and-transform"

	cfg = "configuration/" + cfgName
	nop = "provider/" + nopName
	pt  = "function/" + ptName
)

// e2e is a reduced sample package in the registry.
func (j *journey) e2e(name, tag string) string {
	ref := j.host + "/e2e/crossplane-contrib/" + name
	if tag != "" {
		ref += ":" + tag
	}
	return ref
}

// cluster is the operator's journey: install, inspect, upgrade, uninstall,
// each checked against what the package manager did. Steps that need an
// installed configuration are skipped when it is not there.
func (j *journey) cluster() {
	if !j.install() {
		installed, _ := j.c.get(cfg)
		for _, t := range []string{"get", "describe", "tree", "uninstall a dependency", "versions", "upgrade --dry-run", "plan -f", "upgrade --wait", "rollback --wait", "outdated", "upgrade --all --dry-run", "doctor", "activation plan", "rename"} {
			j.s.skip(t, "the configuration was not installed")
		}
		if installed == nil {
			j.s.skip("uninstall --with-dependencies", "nothing to uninstall")
			j.s.skip("get (after uninstall)", "nothing was installed")
			return
		}
	} else {
		j.get()
		j.describe()
		j.tree()
		j.refuse()
		j.versions()
		j.upgradeDryRun()
		j.planFiles()
		j.upgrade()
		j.rollback()
		j.outdated()
		j.upgradeAllDryRun()
		j.doctor()
		j.activation()
		j.rename()
	}
	if j.uninstall() {
		j.empty()
	} else {
		j.s.skip("get (after uninstall)", "the uninstall failed")
	}
}

func (j *journey) install() bool {
	return j.s.step("install --wait",
		"Install configuration-aws-network v0.23.0: Crossplane pulls the provider and function it depends on from the registry; "+
			"--wait follows all three until Healthy.",
		func(v *verdict) {
			r := j.s.xpkg(waiting, "install", j.e2e("configuration-aws-network", "v0.23.0"), waitFor)
			if !v.exit(r, 0, "installed and healthy") {
				return
			}
			v.says("stdout", r.stdout, "created "+cfg, "configuration.pkg.crossplane.io/"+cfgName+" created")
			v.says("stderr", r.stderr, "followed the package and both dependencies",
				cfg+": Healthy=True", "dependency "+nop+" ("+j.e2e("provider-nop", ""), "dependency "+pt+" ("+j.e2e("function-patch-and-transform", ""))
			v.cluster(j.c.healthy(cfg, nop, pt), "all three Installed and Healthy")
		})
}

func (j *journey) get() {
	j.s.step("get",
		"What is installed, at which version, and is it healthy? Dependencies Crossplane installed by itself show up too.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "get")
			if !v.exit(r, 0, "listed") {
				return
			}
			// NAME KIND PACKAGE VERSION INSTALLED HEALTHY REVISION AGE
			want := map[string]string{cfgName: "v0.23.0", nopName: "v0.4.0", ptName: "v0.10.8"}
			good := true
			for name, version := range want {
				f := strings.Fields(lineWith(r.stdout, name+" "))
				if len(f) < 6 || f[3] != version || f[4] != "True" || f[5] != "True" {
					v.fail("stdout does not list %s at %s, installed and healthy", name, version)
					good = false
				}
			}
			if good {
				v.pass("lists the configuration at v0.23.0 and its dependencies, all installed and healthy")
			}
			v.cluster(j.c.only(cfg, nop, pt), "holds exactly those three")
		})
}

func (j *journey) describe() {
	j.s.step("describe",
		"Everything about one package (spec, revisions, conditions, installed objects, dependencies, events): where to look when it is not Healthy.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "describe", cfg)
			if v.exit(r, 0, "described") {
				v.says("stdout", r.stdout, "shows the image, its dependencies with their constraints and the XRD it installed",
					"Package:            "+j.e2e("configuration-aws-network", "v0.23.0"), "Dependencies:",
					j.e2e("provider-nop", ""), ">=v0.2.0", "CompositeResourceDefinition")
			}
		})
}

func (j *journey) tree() {
	j.s.step("tree",
		"What depends on what, read from Crossplane's Lock, with every package's version and health.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "tree", cfgName)
			if !v.exit(r, 0, "shown") || !v.says("stdout", r.stdout, "the configuration above its provider and function",
				cfg+" ", "├── "+nop+" ", "└── "+pt+" ") {
				return
			}
			for _, ref := range []string{cfg, nop, pt} {
				if !strings.Contains(lineWith(r.stdout, ref+" "), "[installed: True, healthy: True]") {
					v.fail("stdout does not show %s installed and healthy", ref)
					return
				}
			}
			v.pass("all three installed and healthy")
		})
}

func (j *journey) refuse() {
	j.s.step("uninstall a dependency",
		"Removing provider-nop from under the configuration that needs it is refused (exit 3): uninstall plans the removal before deleting anything.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "uninstall", nopName, "--yes")
			if v.exit(r, 3, "refused by its plan") {
				v.says("stderr", r.stderr, "names who depends on it, as KIND/NAME", nop+" is a dependency of "+cfg, "[dependents]")
				v.cluster(j.c.healthy(nop), "the provider is still there and Healthy")
			}
		})
}

func (j *journey) versions() {
	j.s.step("versions",
		"Which versions could the configuration move to? The repository's tags, newest first, with the installed one marked.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "versions", j.e2e("configuration-aws-network", ""))
			if !v.exit(r, 0, "listed") {
				return
			}
			i24, i23, i21 := strings.Index(r.stdout, "v0.24.0"), strings.Index(r.stdout, "v0.23.0"), strings.Index(r.stdout, "v0.21.0")
			if i24 < 0 || i23 < i24 || i21 < i23 {
				v.fail("stdout does not list v0.24.0, v0.23.0, v0.21.0 in that order")
				return
			}
			v.pass("v0.24.0, v0.23.0, v0.21.0, newest first")
			v.says("stdout", lineWith(r.stdout, "v0.23.0"), "v0.23.0 marked as installed by "+cfgName, cfgName)
		})
}

func (j *journey) upgradeDryRun() {
	j.s.step("upgrade --dry-run",
		"What would v0.24.0 break? --dry-run prints the plan (stored versions, live objects, dependents' "+
			"constraints, the running Crossplane) and changes nothing; it exits 3 when the plan would stop the upgrade.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "upgrade", cfgName, "v0.24.0", "--dry-run")
			if !v.exit(r, 0, "the upgrade would go ahead") {
				return
			}
			v.says("stdout", r.stdout, "plans v0.23.0 to v0.24.0: nothing blocks",
				"Plan: upgrade "+cfg+" from "+j.e2e("configuration-aws-network", "v0.23.0")+" to "+j.e2e("configuration-aws-network", "v0.24.0"),
				"0 blocking")
			v.cluster(j.c.runs(cfg, j.e2e("configuration-aws-network", "v0.23.0")), "still at v0.23.0 and Healthy")
		})
}

func (j *journey) planFiles() {
	dir := filepath.Join(j.work, "packages")
	j.s.step("plan -f",
		"The same move as a GitOps pull request would make it: plan -f reads the manifests (here one Configuration at v0.24.0) "+
			"and plans them against the cluster as a set, changing nothing.",
		func(v *verdict) {
			m := "apiVersion: pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: " + cfgName + "\nspec:\n  package: " +
				j.e2e("configuration-aws-network", "v0.24.0") + "\n"
			if err := os.MkdirAll(dir, 0o755); err != nil {
				v.fail("%v", err)
				return
			}
			if err := os.WriteFile(filepath.Join(dir, "configuration.yaml"), []byte(m), 0o644); err != nil {
				v.fail("%v", err)
				return
			}
			r := j.s.xpkg(quick, "plan", "-f", dir)
			if !v.exit(r, 0, "nothing blocks") {
				return
			}
			v.says("stdout", r.stdout, "one upgrade planned, nothing blocking",
				"Plan: upgrade "+cfg+" from "+j.e2e("configuration-aws-network", "v0.23.0")+" to "+j.e2e("configuration-aws-network", "v0.24.0"), "0 blocking")
			v.cluster(j.c.runs(cfg, j.e2e("configuration-aws-network", "v0.23.0")), "still at v0.23.0 and Healthy")
		})
}

func (j *journey) upgrade() {
	j.s.step("upgrade --wait",
		"The upgrade: the plan again (on stderr), then only spec.package changes; --wait follows the new revision until Healthy and its definitions are established.",
		func(v *verdict) {
			r := j.s.xpkg(waiting, "upgrade", cfgName, "v0.24.0", waitFor)
			if !v.exit(r, 0, "upgraded and healthy") {
				return
			}
			v.says("stderr", r.stderr, "the plan ran", "Plan: upgrade "+cfg)
			v.says("stdout", r.stdout, "says what changed", cfg+" upgraded from v0.23.0 to v0.24.0")
			v.cluster(j.c.runs(cfg, j.e2e("configuration-aws-network", "v0.24.0")), "runs v0.24.0, Healthy")
			v.cluster(j.c.healthy(nop, pt), "its dependencies still Healthy")
		})
}

func (j *journey) rollback() {
	j.s.step("rollback --wait",
		"Changed your mind? rollback points the package back at the previous revision's image (planned like an upgrade); "+
			"Crossplane re-activates that revision.",
		func(v *verdict) {
			r := j.s.xpkg(waiting, "rollback", cfgName, waitFor)
			if !v.exit(r, 0, "rolled back and healthy") {
				return
			}
			v.says("stdout", r.stdout, "says what changed", cfg+" rolled back from v0.24.0 to v0.23.0")
			v.cluster(j.c.runs(cfg, j.e2e("configuration-aws-network", "v0.23.0")), "runs v0.23.0 again, Healthy")
		})
}

func (j *journey) outdated() {
	j.s.step("outdated",
		"Which packages are behind? CURRENT is what runs, WANTED the newest version every dependent's constraint admits, "+
			"LATEST the registry's newest; DRIFT says whether the tag now names other content than runs.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "outdated")
			if !v.exit(r, 0, "listed") {
				return
			}
			// NAME KIND CURRENT WANTED LATEST DRIFT
			want := map[string]string{cfgName: "v0.23.0 v0.24.0 v0.24.0 no", nopName: "v0.4.0 v0.4.0 v0.4.0 no", ptName: "v0.10.8 v0.10.8 v0.10.8 no"}
			for name, cols := range want {
				f := strings.Fields(lineWith(r.stdout, name+" "))
				if len(f) < 6 || strings.Join(f[2:6], " ") != cols {
					v.fail("stdout does not show %s as %s", name, cols)
					return
				}
			}
			v.pass("the configuration is behind (v0.23.0, may move to v0.24.0); its dependencies are current; nothing drifted")
		})
}

func (j *journey) upgradeAllDryRun() {
	j.s.step("upgrade --all --dry-run",
		"Move everything to its WANTED version: the combined plan first, dependencies before their dependents, every step planned as a single upgrade is.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "upgrade", "--all", "--dry-run")
			if !v.exit(r, 0, "the upgrade would go ahead") {
				return
			}
			v.says("stdout", r.stdout, "one step: the configuration to v0.24.0, nothing blocks",
				"Plan: upgrade --all: 1 package: "+cfg,
				"Plan: upgrade "+cfg+" from "+j.e2e("configuration-aws-network", "v0.23.0")+" to "+j.e2e("configuration-aws-network", "v0.24.0"),
				"0 blocking")
			v.cluster(j.c.runs(cfg, j.e2e("configuration-aws-network", "v0.23.0")), "still at v0.23.0 and Healthy")
		})
}

func (j *journey) doctor() {
	j.s.step("doctor",
		"What could take every package down (two Lock nodes for one source, an unresolved Lock, a definition another revision controls, …)? "+
			"The package manager's state read once; --fix would repair what it can prove. This local copy of configuration-aws-network "+
			"depends on provider-nop in place of provider-aws-ec2, so its Composition composes ec2.aws.upbound.io kinds that no installed "+
			"provider defines: doctor says so (exit 3), since its composite resources could never become ready, and --fix has nothing to repair.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "doctor", "--fix", "--dry-run")
			if !v.exit(r, 3, "a blocking finding") {
				return
			}
			v.says("stdout", r.stdout, "the composed kinds no provider defines, and nothing to repair", "Doctor: 3 packages, ",
				"[inactive-composed-kind]", "VPC.ec2.aws.upbound.io")
			v.cluster(j.c.runs(cfg, j.e2e("configuration-aws-network", "v0.23.0")), "nothing changed: still at v0.23.0 and Healthy")
		})
}

func (j *journey) activation() {
	j.s.step("activation plan",
		"Which managed resource kinds does the cluster need active? Crossplane v2 installs a provider's kinds as MRDs; a "+
			"ManagedResourceActivationPolicy activates them. The plan reads the Compositions and the objects there are and prints the "+
			"smallest policy for them: here the Composition composes only kinds no installed provider defines, and provider-nop's "+
			"one kind (active under the default policy, *) is needed by nothing, so no policy is printed, only what was found.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "activation", "plan")
			if !v.exit(r, 0, "planned") {
				return
			}
			v.says("stdout", r.stdout, "the figures, the default policy and the kinds nothing defines",
				"# ManagedResourceDefinitions: 1, 1 active today; 0 needed", "Policy default (activate *) activates 1",
				"no MRD or CRD defines them", "VPC.ec2.aws.upbound.io: Composition xnetworks.aws.platform.upbound.io")
		})
}

func (j *journey) rename() {
	const other = "configuration/aws-network"
	j.s.step("rename",
		"Give a package another name without losing what it installed: the new package is made paused, the old one's revision lets go, "+
			"the new one takes over and is checked, then the old one goes. Here away from the name Crossplane's resolver gives it, and back "+
			"(the default, which is what a package others depend on must have).",
		func(v *verdict) {
			r := j.s.xpkg(waiting, "rename", cfg, "aws-network", "--yes")
			if !v.exit(r, 0, "renamed") || !v.says("stdout", r.stdout, "handed over what it installed", cfg+" renamed to "+other+": ") {
				return
			}
			if !v.cluster(j.c.healthy(other, nop, pt), "the configuration healthy under its new name, its dependencies too") {
				return
			}
			r = j.s.xpkg(waiting, "rename", other, "--yes")
			if v.exit(r, 0, "renamed back") {
				v.says("stdout", r.stdout, "back under the resolver's name", other+" renamed to "+cfg+": ")
				v.cluster(j.c.only(cfg, nop, pt), "the three packages, under their names as before")
			}
		})
}

func (j *journey) uninstall() bool {
	return j.s.step("uninstall --with-dependencies",
		"Crossplane never removes dependencies: --with-dependencies also removes those nothing else needs; "+
			"--wait waits until all are gone.",
		func(v *verdict) {
			r := j.s.xpkg(waiting, "uninstall", cfg, "--with-dependencies", "--yes", waitFor)
			if !v.exit(r, 0, "uninstalled") {
				return
			}
			v.says("stdout", r.stdout, "deleted the configuration and both dependencies", cfg+" deleted", nop+" deleted", pt+" deleted")
			v.cluster(j.c.gone(cfg, nop, pt), "the three packages and their revisions are gone")
		})
}

func (j *journey) empty() {
	j.s.step("get (after uninstall)",
		"Nothing is left behind.",
		func(v *verdict) {
			r := j.s.xpkg(quick, "get")
			if v.exit(r, 0, "listed") {
				v.says("stderr", r.stderr, "none listed", "No packages found")
				if strings.TrimSpace(r.stdout) != "" {
					v.fail("stdout is not empty")
				}
				v.cluster(j.c.only(), "no packages")
			}
		})
}

// lineWith is the first line of s that holds sub.
func lineWith(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}
