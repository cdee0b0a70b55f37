package diffbench

import (
	"bytes"
	"fmt"
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
