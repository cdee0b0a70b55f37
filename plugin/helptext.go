package plugin

import (
	"embed"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// The verbs' help: help/VERB.txt is the long description (Markdown, as
// kubectl's templates render it) and help/VERB.example.txt the examples,
// kept out of the commands so that a verb's file holds its flags and its
// printing.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpLong is verb's long description; {{rules}} in it stands for the
// rules of the verb's plan (findings.RulesHelp).
func helpLong(verb string) string {
	return strings.Replace(helpFile(verb+".txt"), "{{rules}}", findings.RulesHelp(verb), 1)
}

// helpExample is verb's examples.
func helpExample(verb string) string { return helpFile(verb + ".example.txt") }

// helpFile is an embedded help text, without the newline that ends the
// file. Every command is built at start, so a missing one fails every
// test of the command tree.
func helpFile(name string) string {
	b, err := helpFiles.ReadFile("help/" + name)
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}
