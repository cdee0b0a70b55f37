package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

const startupMethod = `` + "`kubectl-xpkg --help`" + ` and ` + "`kubectl-xpkg version --client`" + ` (no cluster
contacted) against a hello-world Go program (` + "`fmt.Println`" + `) built here by the
same toolchain with the same flags as ` + "`make build`" + ` (CGO_ENABLED=0, -trimpath,
-ldflags "-s -w"), and against the crossplane CLI's ` + "`crossplane --help`" + ` (cmd/crank
of crossplane v1.20.0, the newest release whose module holds the CLI, built the
same way by hack/build-crossplane-cli.sh), all taking turns. **Ratios: command /
hello-world** (hello-world is the least a Go binary costs to start on this
machine) **and command / crossplane CLI** (the goal: 0.15 or less).`

const helloSource = `package main

import "fmt"

func main() { fmt.Println("hello, world") }
`

// runStartup measures the start path and writes the startup section.
func runStartup(cfg *config, r *report) error {
	r.para(startupMethod)
	hello, err := buildHello(cfg.tmp)
	if err != nil {
		return err
	}
	if err := sizes(r, cfg.bin, hello); err != nil {
		return err
	}
	runs := cfg.runs * startupRuns
	cmds := []measure.Command{
		{Bin: hello},
		{Bin: cfg.bin, Args: []string{"--help"}},
		{Bin: cfg.bin, Args: []string{"version", "--client"}},
		{Bin: cfg.crossplaneCLI, Args: []string{"--help"}},
	}
	res, err := measure.Interleave(runs, cmds...)
	if err != nil {
		return err
	}
	r.printf("%d runs each, taking turns.\n\n", runs)
	r.printf("| command | wall (median) | peak RSS | wall / hello-world | wall / crossplane --help |\n|---|---|---|---|---|\n")
	names := []string{"hello-world", "kubectl-xpkg --help", "kubectl-xpkg version --client", "crossplane --help (CLI v1.20.0)"}
	cli := res[len(res)-1].Wall
	for i, m := range res {
		r.printf("| %s | %s | %s | %s | %s |\n", names[i], ms(m.Wall), rssOf(m.RSS, m.Floor), ratio(m.Wall, res[0].Wall), ratio(m.Wall, cli))
	}
	r.printf("\n")
	t, err := traceInits(cfg.bin, runs)
	if err != nil {
		return err
	}
	t.write(r, res[1].Wall)
	return nil
}

// buildHello builds the hello-world program in its own module under dir,
// as make build builds the plugin.
func buildHello(dir string) (string, error) {
	src := filepath.Join(dir, "hello")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{"go.mod": "module hello\n\ngo 1.26\n", "main.go": helloSource}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "hello-world")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build hello-world: %v: %s", err, out)
	}
	return bin, nil
}

// sizes writes the size of both binaries and whether each is stripped.
func sizes(r *report, bins ...string) error {
	r.printf("| binary | size | stripped (no symbol table) |\n|---|---|---|\n")
	names := []string{"kubectl-xpkg", "hello-world"}
	for i, bin := range bins {
		st, err := os.Stat(bin)
		if err != nil {
			return err
		}
		stripped, err := isStripped(bin)
		if err != nil {
			return err
		}
		r.printf("| %s | %.1f MiB (%d bytes) | %s |\n", names[i], float64(st.Size())/(1<<20), st.Size(), yesNo(stripped))
	}
	r.printf("\n")
	return nil
}

func isStripped(bin string) (bool, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return f.Section(".symtab") == nil, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no: build it as make build does"
}
