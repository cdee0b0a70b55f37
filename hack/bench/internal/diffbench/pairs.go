package diffbench

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// pair is two package.yaml streams, compared as an upgrade from old to new.
type pair struct {
	name     string
	old, new []byte
}

// metaAPI starts the apiVersion of the package metadata document.
const metaAPI = "apiVersion: meta.pkg.crossplane.io/"

// group is the API group suffix the synthetic copies rename. It is matched
// bare, not as ".aws.crossplane.io", so that the provider's own group
// (spec.group: aws.crossplane.io of ProviderConfig and friends) is renamed
// along with the CRD names it is part of.
const group = "aws.crossplane.io"

// splitDocs splits a stream at its "---" lines. Every document keeps its
// final newline.
func splitDocs(stream []byte) [][]byte {
	stream = bytes.TrimPrefix(stream, []byte("---\n"))
	parts := bytes.Split(stream, []byte("\n---\n"))
	for i := range len(parts) - 1 {
		parts[i] = append(parts[i], '\n')
	}
	return parts
}

// joinDocs is the inverse of splitDocs.
func joinDocs(docs [][]byte) []byte {
	return bytes.Join(docs, []byte("---\n"))
}

// metaAndObjects splits a stream into its metadata document, which must come
// first, and the objects after it.
func metaAndObjects(stream []byte) (meta []byte, objects [][]byte, err error) {
	docs := splitDocs(stream)
	if !bytes.Contains(docs[0], []byte(metaAPI)) {
		return nil, nil, fmt.Errorf("the first document is not the package metadata (%s…)", metaAPI)
	}
	for i, d := range docs[1:] {
		if bytes.Contains(d, []byte(metaAPI)) {
			return nil, nil, fmt.Errorf("document %d is a second package metadata document", i+2)
		}
	}
	return docs[0], docs[1:], nil
}

// synthetic makes a package copies times larger: the metadata document
// once, then copies of every object, copy i with group renamed to
// aws<i>.crossplane.io so that the objects stay distinct.
func synthetic(stream []byte, copies int) ([]byte, error) {
	meta, objects, err := metaAndObjects(stream)
	if err != nil {
		return nil, err
	}
	docs := [][]byte{meta}
	for i := range copies {
		for _, o := range objects {
			docs = append(docs, bytes.ReplaceAll(o, []byte(group), []byte(renamed(i))))
		}
	}
	// Every copy is renamed alike: checking the last one is enough.
	if err := checkCRDs(docs[len(docs)-len(objects):], renamed(copies-1)); err != nil {
		return nil, err
	}
	return joinDocs(docs), nil
}

// renamed is group in copy i.
func renamed(i int) string { return "aws" + strconv.Itoa(i) + ".crossplane.io" }

// crd is what checkCRDs reads of a CustomResourceDefinition.
type crd struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Plural string `json:"plural"`
		} `json:"names"`
	} `json:"spec"`
}

// checkCRDs checks that the renamed copies are still consistent CRDs:
// named <plural>.<group>, in a group under want.
func checkCRDs(docs [][]byte, want string) error {
	for _, d := range docs {
		var c crd
		if err := yaml.Unmarshal(d, &c); err != nil {
			return err
		}
		if c.Kind != "CustomResourceDefinition" {
			continue
		}
		if c.Metadata.Name != c.Spec.Names.Plural+"."+c.Spec.Group {
			return fmt.Errorf("renamed CRD %s: spec.names.plural %s, spec.group %s", c.Metadata.Name, c.Spec.Names.Plural, c.Spec.Group)
		}
		if !strings.HasSuffix(c.Spec.Group, want) {
			return fmt.Errorf("renamed CRD %s: spec.group %s is not under %s", c.Metadata.Name, c.Spec.Group, want)
		}
	}
	return nil
}

// generatedCRDs is how many CRDs the generated pair holds.
const generatedCRDs = 2000

// generated is a pair of two consecutive releases of a provider with
// generatedCRDs CRDs (about 100 MB each): the 100 largest CRDs of new
// (each over 50 KB: the size of the largest real providers' CRDs),
// generatedCRDs/100 times over, copy i in the group aws<i>.crossplane.io,
// against old's version of each (a CRD old lacks is added).
func generated(old, new []byte) (pair, error) {
	oldMeta, oldObjects, err := metaAndObjects(old)
	if err != nil {
		return pair{}, err
	}
	newMeta, newObjects, err := metaAndObjects(new)
	if err != nil {
		return pair{}, err
	}
	oldByName := map[string][]byte{}
	for _, d := range oldObjects {
		var c crd
		if err := yaml.Unmarshal(d, &c); err != nil {
			return pair{}, err
		}
		oldByName[c.Metadata.Name] = d
	}
	var crds [][]byte
	for _, d := range newObjects {
		if bytes.Contains(d, []byte("\nkind: CustomResourceDefinition\n")) {
			crds = append(crds, d)
		}
	}
	slices.SortStableFunc(crds, func(a, b []byte) int { return len(b) - len(a) })
	const distinct = 100
	if len(crds) < distinct {
		return pair{}, fmt.Errorf("%d CRDs, want %d", len(crds), distinct)
	}
	crds = crds[:distinct]
	olds, news := [][]byte{oldMeta}, [][]byte{newMeta}
	for i := range generatedCRDs {
		d := crds[i%distinct]
		copyOf := renamed(i / distinct)
		news = append(news, bytes.ReplaceAll(d, []byte(group), []byte(copyOf)))
		var c crd
		if err := yaml.Unmarshal(d, &c); err != nil {
			return pair{}, err
		}
		if o, ok := oldByName[c.Metadata.Name]; ok {
			olds = append(olds, bytes.ReplaceAll(o, []byte(group), []byte(copyOf)))
		}
	}
	if err := checkCRDs(news[len(news)-distinct:], renamed(generatedCRDs/distinct-1)); err != nil {
		return pair{}, err
	}
	return pair{fmt.Sprintf("generated, %d CRDs", generatedCRDs), joinDocs(olds), joinDocs(news)}, nil
}
