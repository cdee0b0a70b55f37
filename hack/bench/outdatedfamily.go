package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

// The family cluster: the family provider and its members.
const (
	familyName    = "provider-family-bench"
	familyMembers = 150
	// familySkewed is the member that runs v1.1.0 while the rest of
	// the family runs v1.0.0.
	familySkewed      = "provider-bench-m150"
	familyLabel       = "pkg.crossplane.io/provider-family"
	familyConstraint  = ">= 0.0.0"
	familyRuleSkew    = "family-skew"
	familyWantVersion = "v1.1.0"
)

const outdatedFamilyMethod = `**A provider family.** The same measurement on a second cluster (a fresh
API server and registry) holding one provider family and nothing else: the
family provider ` + "`" + familyName + "`" + ` and 150 members (` + "`provider-bench-m001`" + ` …
` + "`" + familySkewed + "`" + `), 151 providers, each from its own repository holding v1.0.0
and v1.1.0 of a small provider package whose meta object carries the label
` + "`" + familyLabel + ": " + familyName + "`" + `; a member's meta object
also depends on the family provider at ` + "`" + familyConstraint + "`" + `. Each provider has one ProviderRevision, named as
the package manager names it for its digest (Crossplane v2.3's naming, as the
API server serves v2.3's CRDs), labelled with its package and the family
(Crossplane copies the meta object's labels), Active, its image the
provider's reference; the Lock lists every provider and each member's
dependency on the family provider at ` + "`" + familyConstraint + "`" + `. Every provider runs
v1.0.0 but ` + "`" + familySkewed + "`" + `, which runs v1.1.0; before measuring, ` + "`outdated -o json`" + `
is checked to exit 0, list 151 providers each in the family, none drifted,
each wanted at v1.1.0, and one ` + "`family-skew`" + ` finding of 2 versions. Expected: the
same API requests as on the 50-package cluster (none per member); each
repository read once (its tag list and one HEAD of the tag it runs,
counted per repository through the proxy); the meta object of v1.1.0 read
for each of the 150 providers that would move to it. **Time per package** is
the median wall time divided by the packages listed (and the median CPU time,
user and system, likewise: less moved by the machine's load), against the
50-package cluster's measured in the same run.`

// familyNames are the family provider and its members.
func familyNames() []string {
	names := []string{familyName}
	for i := 1; i <= familyMembers; i++ {
		names = append(names, fmt.Sprintf("provider-bench-m%03d", i))
	}
	return names
}

// familyRuns is the version a provider of the family runs.
func familyRuns(name string) string {
	if name == familySkewed {
		return "v1.1.0"
	}
	return "v1.0.0"
}

// benchRevisionName is the name the package manager gives the revision of
// the image with digest d: the environments serve Crossplane v2.3's CRDs
// (testenv.DefaultCrossplaneVersion), so v2.3's naming.
func benchRevisionName(pkg string, d v1.Hash) string {
	return pkgmanager.RevisionNameFor(pkgmanager.V23, pkg, d.Hex, 1)
}

// populateFamily pushes each provider's repository and writes the
// providers, their status, one revision each and the Lock, a few at a
// time.
func populateFamily(ctx context.Context, dyn dynamic.Interface, registry, refHost string, auth remote.Option) error {
	famRepo := refHost + "/bench/" + familyName
	names := familyNames()
	lock := make([]any, len(names))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, n := range names {
		g.Go(func() error {
			entry, err := installFamilyProvider(gctx, dyn, registry, refHost, auth, n, famRepo)
			lock[i] = entry
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	l := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "Lock",
		"metadata": map[string]any{"name": "lock"}, "packages": lock,
	}}
	_, err := dyn.Resource(schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}).Create(ctx, l, metav1.CreateOptions{})
	return err
}

// installFamilyProvider pushes v1.0.0 and v1.1.0 of the provider called
// name and writes it as the package manager would at the version it runs;
// it returns its Lock entry.
func installFamilyProvider(ctx context.Context, dyn dynamic.Interface, registry, refHost string, auth remote.Option, name, famRepo string) (map[string]any, error) {
	repo := "bench/" + name
	runs := familyRuns(name)
	dependsOn := famRepo
	if name == familyName {
		dependsOn = ""
	}
	var d v1.Hash
	for _, tag := range []string{"v1.0.0", "v1.1.0"} {
		img, err := fixture.Image(familyMeta(name, tag, dependsOn))
		if err != nil {
			return nil, err
		}
		if tag == runs {
			if d, err = img.Digest(); err != nil {
				return nil, err
			}
		}
		ref, err := nameRef(registry + "/" + repo + ":" + tag)
		if err != nil {
			return nil, err
		}
		if err := remote.Write(ref, img, auth, remote.WithContext(ctx)); err != nil {
			return nil, err
		}
	}
	image := refHost + "/" + repo + ":" + runs
	rev := benchRevisionName(name, d)
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"package": image},
	}}
	created, err := dyn.Resource(providersGVR).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	created.Object["status"] = map[string]any{"currentRevision": rev, "currentIdentifier": image}
	if _, err := dyn.Resource(providersGVR).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	r := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderRevision",
		"metadata": map[string]any{"name": rev, "labels": map[string]any{packageLabel: name, familyLabel: familyName}},
		"spec":     map[string]any{"image": image, "revision": int64(1), "desiredState": "Active"},
	}}
	r.SetOwnerReferences([]metav1.OwnerReference{ownerOf(created, true)})
	if _, err := dyn.Resource(revisionsGVR).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create %s: %w", rev, err)
	}
	entry := map[string]any{"name": rev, "source": refHost + "/" + repo, "version": runs, "type": "Provider", "dependencies": []any{}}
	if dependsOn != "" {
		entry["dependencies"] = []any{map[string]any{"package": dependsOn, "constraints": familyConstraint, "type": "Provider"}}
	}
	return entry, nil
}

// familyMeta is a small provider package's meta object, labelled with the
// family, depending on the family provider (dependsOn, unless "").
func familyMeta(name, tag, dependsOn string) []byte {
	meta := fmt.Sprintf("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: %s\n  labels:\n    %s: %s\n  annotations:\n    version: %s\n",
		name, familyLabel, familyName, tag)
	if dependsOn != "" {
		meta += fmt.Sprintf("spec:\n  dependsOn:\n  - provider: %s\n    version: %q\n", dependsOn, familyConstraint)
	}
	return []byte(meta)
}

// checkFamily makes sure the report is what the cluster holds: 151
// providers of the family, each wanted at v1.1.0, none drifted, and the
// family found at two versions.
func checkFamily(out string) error {
	var doc struct {
		Items []struct {
			Name, Current, Wanted, Latest, Family string
			Drifted                               bool
			Error                                 string
		} `json:"items"`
		Findings []struct {
			Rule, Message string
			Count         *int64
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return fmt.Errorf("outdated -o json: %w", err)
	}
	if want := familyMembers + 1; len(doc.Items) != want {
		return fmt.Errorf("outdated lists %d packages, want %d", len(doc.Items), want)
	}
	for _, it := range doc.Items {
		if it.Family != familyName || it.Current != familyRuns(it.Name) || it.Wanted != familyWantVersion ||
			it.Latest != familyWantVersion || it.Drifted || it.Error != "" {
			return fmt.Errorf("outdated reports %s as %+v, want family %s, current %s, wanted and latest %s", it.Name, it, familyName, familyRuns(it.Name), familyWantVersion)
		}
	}
	if len(doc.Findings) != 1 {
		return fmt.Errorf("outdated found %d findings, want one (%s): %+v", len(doc.Findings), familyRuleSkew, doc.Findings)
	}
	f := doc.Findings[0]
	if f.Rule != familyRuleSkew || f.Count == nil || *f.Count != 2 || !strings.Contains(f.Message, "runs 2 versions") {
		return fmt.Errorf("outdated found %+v, want one %s finding of 2 versions", f, familyRuleSkew)
	}
	return nil
}

var (
	repoTagListPath  = regexp.MustCompile(`^/v2/(.+)/tags/list$`)
	repoManifestPath = regexp.MustCompile(`^/v2/(.+)/manifests/([^/]+)$`)
)

// repoListHeads are the reads of one repository: tag lists, and the
// references of its manifest HEADs.
type repoListHeads struct {
	lists int
	heads []string
}

// perRepository sorts the tag lists and manifest HEADs by repository.
func perRepository(reqs []string) map[string]*repoListHeads {
	out := map[string]*repoListHeads{}
	at := func(repo string) *repoListHeads {
		if out[repo] == nil {
			out[repo] = &repoListHeads{}
		}
		return out[repo]
	}
	for _, r := range reqs {
		method, path, _ := strings.Cut(r, " ")
		if m := repoTagListPath.FindStringSubmatch(path); method == "GET" && m != nil {
			at(m[1]).lists++
		}
		if m := repoManifestPath.FindStringSubmatch(path); method == "HEAD" && m != nil {
			at(m[1]).heads = append(at(m[1]).heads, m[2])
		}
	}
	return out
}

// readOnce counts the family's repositories read once (one tag list, one
// HEAD of the tag the provider runs), and names the others.
func readOnce(reqs []string) (once int, not []string) {
	reads := perRepository(reqs)
	for _, n := range familyNames() {
		repo := "bench/" + n
		r := reads[repo]
		delete(reads, repo)
		if r != nil && r.lists == 1 && slices.Equal(r.heads, []string{familyRuns(n)}) {
			once++
			continue
		}
		not = append(not, fmt.Sprintf("%s (%+v)", repo, r))
	}
	for repo, r := range reads {
		not = append(not, fmt.Sprintf("%s, not a provider's (%+v)", repo, *r))
	}
	slices.Sort(not)
	return once, not
}

// runOutdatedFamily measures the family cluster and compares its time per
// package with the 50-package cluster's (flat).
func runOutdatedFamily(cfg *config, r *report, flat outdatedRun) error {
	r.para(outdatedFamilyMethod)
	fam, err := measureOutdated(cfg, "-family", familyMembers+1, populateFamily, checkFamily)
	if err != nil {
		return fmt.Errorf("family: %w", err)
	}
	n := fam.packages
	lists, heads, pings, other := registryKinds(fam.registry)
	once, not := readOnce(fam.registry)
	sameAPI := "the same requests as on the 50-package cluster"
	if !slices.Equal(fam.api, flat.api) {
		sameAPI = "NOT the 50-package cluster's requests"
	}
	r.printf("A provider family: %d providers (%s and %d members) in %d repositories, %d runs each, taking turns.\n\n", n, familyName, familyMembers, n, cfg.runs)
	r.printf("| | count | per repository |\n|---|---|---|\n")
	r.printf("| API requests (discovery cached) | %d (%s): %s | — |\n", len(fam.api), sameAPI, strings.Join(fam.api, ", "))
	r.printf("| registry tag lists | %d | %.1f |\n", lists, float64(lists)/float64(n))
	r.printf("| registry manifest HEADs | %d | %.1f |\n", heads, float64(heads)/float64(n))
	r.printf("| registry /v2/ authentication pings | %d | %.1f |\n", pings, float64(pings)/float64(n))
	r.printf("| other registry requests | %d | %.1f |\n", other, float64(other)/float64(n))
	r.printf("| repositories read once (one tag list, one HEAD of the tag it runs) | %d of %d | — |\n\n", once, n)
	if len(not) > 0 {
		r.printf("Read other than once: %s.\n\n", strings.Join(not, "; "))
	}
	r.printf("| cluster | packages | outdated (median) | per package | CPU per package | peak RSS | get (median) | per package | outdated / get |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		run  outdatedRun
	}{{"50 packages, no family", flat}, {"one family of 150 members", fam}} {
		res := row.run.res
		r.printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", row.name, row.run.packages,
			ms(res[0].Wall), ms(perPackage(res[0].Wall, row.run.packages)), ms(perPackage(res[0].CPU, row.run.packages)), rssOf(res[0].RSS, res[0].Floor),
			ms(res[1].Wall), ms(perPackage(res[1].Wall, row.run.packages)), ratio(res[0].Wall, res[1].Wall))
	}
	perFam, perFlat := perPackage(fam.res[0].Wall, n), perPackage(flat.res[0].Wall, flat.packages)
	met := "met"
	if once != n || perFam > perFlat {
		met = "not met"
	}
	r.printf("\n**Goal: on one family of %d members, every repository read once and outdated's time per package within the 50-package cluster's: %s (%d of %d repositories read once; %s per package against %s, %s).**\n\n",
		familyMembers, met, once, n, ms(perFam), ms(perFlat), ratio(perFam, perFlat))
	return nil
}

func perPackage(d time.Duration, n int) time.Duration { return d / time.Duration(n) }
