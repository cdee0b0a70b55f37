package hostile

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// Stream limits the cases are built against: the plugin's defaults.
const (
	// MaxDocumentBytes is the default --max-document-size (32Mi).
	MaxDocumentBytes = 32 << 20
	// MaxDocuments is the most documents a stream may hold.
	MaxDocuments = 100000
)

// configMap starts a ConfigMap document named name: an object no package
// may hold, which the hostile documents are.
func configMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
}

// streamCases are package.yaml streams that are hostile YAML, break the
// stream limits, or break the content rules. The hostile document comes
// first, before the meta object, so that install's kind detection, which
// reads only up to the meta object, meets it too.
func streamCases(b *builder) {
	stream := func(c Case, docs ...string) {
		c.Artifact = b.gzStream([]byte(strings.Join(docs, "---\n")))
		b.add(c)
	}

	// Billion laughs: ten levels of nine aliases, 10^9 strings if expanded.
	var laughs strings.Builder
	laughs.WriteString(configMap("laughs") + "data:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&laughs, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 9), ", "))
	}
	stream(Case{Name: "alias-bomb", About: "a billion-laughs document: ten levels of nine YAML aliases",
		Want: "aliases expand it", Outcome: Malformed}, laughs.String(), metaDoc)

	// Few aliases, each of a large scalar: the YAML decoder's alias check
	// counts nodes, not bytes, and would let 96 copies of 1 MiB through.
	// (At 1 MiB the document is refused for its size before its aliases
	// are measured; pkg/xpkg's tests cover the measurement itself.)
	var amp strings.Builder
	amp.WriteString(configMap("amplified") + "data:\n  big: &big " + strings.Repeat("x", 1<<20) + "\n  refs: [")
	amp.WriteString(strings.TrimSuffix(strings.Repeat("*big, ", 96), ", ") + "]\n")
	stream(Case{Name: "alias-amplification", About: "a 1 MiB document whose 96 aliases of a 1 MiB scalar expand it to 97 MiB",
		Want: "anchors or aliases, which only the general YAML reader takes", Outcome: Malformed}, amp.String(), metaDoc)

	// 40 MB in one document, past --max-document-size.
	var giant bytes.Buffer
	giant.WriteString(configMap("giant") + "data:\n  lines: |\n")
	line := "    " + strings.Repeat("all work and no play makes a giant document ", 3) + "\n"
	for giant.Len() < 40<<20 {
		giant.WriteString(line)
	}
	stream(Case{Name: "giant-document", About: "a single 40 MB document", InDocuments: true,
		Want: fmt.Sprintf("document 0 is larger than %d bytes", MaxDocumentBytes)}, giant.String(), metaDoc)

	const depth = 100000
	stream(Case{Name: "deep-nesting", About: fmt.Sprintf("a document nested %d levels deep", depth),
		Want: "exceeded max depth", Outcome: Malformed},
		configMap("deep")+"data: "+strings.Repeat("{a: ", depth)+"x"+strings.Repeat("}", depth)+"\n", metaDoc)

	stream(Case{Name: "non-utf8", About: "a meta object whose description is Latin-1, not UTF-8",
		Want: "UTF-8", Outcome: Malformed},
		metaDoc+"  annotations:\n    meta.crossplane.io/description: caf\xe9 cr\xe8me br\xfbl\xe9e\n", crdDoc)

	stream(Case{Name: "not-a-mapping", About: "a document that is a YAML list, before the meta object",
		Want: "not a YAML mapping but a list", Outcome: Malformed}, "- apiVersion: v1\n- kind: ConfigMap\n", metaDoc)

	flood := strings.Repeat("a: 1\n---\n", MaxDocuments+1) + metaDoc
	b.add(Case{Name: "document-flood", About: fmt.Sprintf("%d documents before the meta object", MaxDocuments+1), InDocuments: true,
		Artifact: b.gzStream([]byte(flood)), Want: fmt.Sprintf("more than %d documents", MaxDocuments)})

	// Documents that hold only a comment are skipped without being counted
	// against the document limit, so that only --max-size bounds the time
	// they take: 45 ns a byte, 45 s for the 1 GiB it allows. 48 MiB keeps
	// the run short and is still 6 million documents.
	const commentBytes = 48 << 20
	comments := gzFlood(tarHeader(b, fixture.StreamFile, commentBytes), []byte("# -\n---\n"), commentBytes, make([]byte, 1024))
	b.add(Case{Name: "comment-flood", About: "a 75 KB layer whose package.yaml is 6 million documents holding only a comment", InDocuments: true,
		Artifact: b.based(fixture.RawLayer(comments)), Want: fmt.Sprintf("more than %d documents", MaxDocuments)})

	// Within every limit, but flow style, which the fast decoder leaves to
	// the general one: it builds a tree, then JSON, then another tree.
	var flow strings.Builder
	flow.WriteString(configMap("flow") + "data: [")
	for flow.Len() < 4<<20 {
		flow.WriteString("{a: 1}, ")
	}
	flow.WriteString("{}]\n")
	// The general YAML decoder holds about a hundred times a flow-style
	// document's text: such documents are read up to a bound of their own.
	stream(Case{Name: "flow-amplification", About: "a 4 MiB flow-style document of small mappings, within --max-document-size",
		Want: "flow-style collections, which only the general YAML reader takes", Outcome: Malformed}, flow.String(), metaDoc)

	stream(Case{Name: "wrong-meta-kind", About: "a meta object of kind Stack (a Crossplane v0 word), not Provider, Configuration or Function",
		Want: "no meta object", Outcome: BreaksRules},
		strings.Replace(metaDoc, "kind: Provider", "kind: Stack", 1), crdDoc)

	// Objects a Provider may not hold, named to climb out of a directory
	// that extract -o DIR/ writes them to.
	stream(Case{Name: "disallowed-kinds", About: "a Provider that also holds a cluster-admin ClusterRoleBinding and a Deployment named ../../" + Escapee,
		Want: "ClusterRoleBinding.rbac.authorization.k8s.io is not allowed in a Provider package", Outcome: BreaksRules, KindKnown: true},
		metaDoc, crdDoc,
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: ../../"+Escapee+"\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n- kind: Group\n  name: system:authenticated\n  apiGroup: rbac.authorization.k8s.io\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: /tmp/"+Escapee+"\n  namespace: kube-system\nspec: {}\n")
}
