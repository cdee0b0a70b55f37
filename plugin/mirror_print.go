package plugin

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// printMirrorPlan prints the closure of --dry-run.
func printMirrorPlan(w io.Writer, output string, plan *action.MirrorPlan) error {
	switch output {
	case printers.FormatJSON, printers.FormatYAML:
		return printers.PrintObject(w, output, plan)
	case printers.FormatName:
		var b strings.Builder
		for _, p := range plan.Packages {
			fmt.Fprintln(&b, p.Ref())
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	wide := output == printers.FormatWide
	header := []string{"PACKAGE", "VERSION", "DIGEST", "CONSTRAINED BY"}
	if wide {
		header = append(header, "KIND", "DESTINATION")
	}
	t := printers.NewTable(header...)
	for _, p := range plan.Packages {
		digest := p.Digest
		if !wide {
			digest = shortDigest(digest)
		}
		row := []string{p.Package, p.Version, digest, constrainedBy(p)}
		if wide {
			row = append(row, p.Kind, destination(plan, p))
		}
		t.Row(row...)
	}
	return t.Render(w)
}

func constrainedBy(p *action.MirrorPackage) string {
	var by []string
	if p.Root {
		by = append(by, "(named)")
	}
	for _, h := range p.ConstrainedBy {
		by = append(by, h.By+" "+h.Constraint)
	}
	return strings.Join(by, ", ")
}

func destination(plan *action.MirrorPlan, p *action.MirrorPackage) string {
	if p.Destination != "" {
		return p.Destination
	}
	return plan.To
}

// printImageConfigs writes the ImageConfigs as YAML documents (or one
// JSON List), ready for kubectl apply -f -.
func printImageConfigs(w io.Writer, output string, ics []map[string]any) error {
	if len(ics) == 0 {
		return nil
	}
	if output == printers.FormatJSON {
		items := make([]any, len(ics))
		for i, ic := range ics {
			items[i] = ic
		}
		return printers.PrintObject(w, output, map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	var b strings.Builder
	for i, ic := range ics {
		y, err := yaml.Marshal(ic)
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mirrorLine is one package mirrored, as stderr tells it.
func mirrorLine(c action.MirrorCopy) string {
	r := c.Result
	what := fmt.Sprintf("%d blob(s) sent (%s)", r.BlobsSent, size(r.BytesSent))
	if r.Skipped {
		what = "already there"
	} else if r.BlobsPresent > 0 {
		what += fmt.Sprintf(", %d already there", r.BlobsPresent)
	}
	platforms := ""
	if n := len(r.Image.Platforms); n > 0 {
		platforms = fmt.Sprintf(", %d platform(s)", n)
	}
	to := c.Package.Destination
	if to == "" {
		to = "the layout"
	}
	return fmt.Sprintf("Mirrored %s to %s (%s%s): %s", c.Package.Ref(), to, shortDigest(r.Image.Digest.String()), platforms, what)
}

// writeMirrorResult is the summary on stderr: only what was verified at
// the destination counts as mirrored.
func writeMirrorResult(w io.Writer, plan *action.MirrorPlan, res *action.MirrorResult) {
	if res == nil {
		return
	}
	blobs, present, bytes, skipped := res.Sent()
	fmt.Fprintf(w, "Mirrored %d of %d package(s) to %s, each verified there by digest: %d copied (%d blob(s), %s sent; %d blob(s) already there), %d already there\n",
		len(res.Copied), len(plan.Packages), mirrorTarget(plan), len(res.Copied)-skipped, blobs, size(bytes), present, skipped)
	for _, f := range res.Failed {
		fmt.Fprintf(w, "Not mirrored: %s: %s\n", f.Package.Ref(), exit.Message(f.Err))
	}
}

// mirrorTarget is where the plan copies to, for people.
func mirrorTarget(plan *action.MirrorPlan) string {
	if dir, ok := strings.CutPrefix(plan.To, action.LayoutScheme); ok {
		return "the OCI layout " + dir
	}
	return plan.To
}

// mirrorProgress shows, on a terminal only, the bytes sent so far; the
// per-package lines are printed through it so the two do not mix.
type mirrorProgress struct {
	w     io.Writer
	total int
	mu    sync.Mutex
	sent  int64
	done  int
	shown bool
	quit  chan struct{}
	ended chan struct{}
}

func startMirrorProgress(w io.Writer, total int) *mirrorProgress {
	p := &mirrorProgress{w: w, total: total, quit: make(chan struct{}), ended: make(chan struct{})}
	if w == nil {
		close(p.ended)
		return p
	}
	go func() {
		defer close(p.ended)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
	return p
}

func (p *mirrorProgress) add(delta int64) {
	p.mu.Lock()
	p.sent += delta
	p.mu.Unlock()
}

func (p *mirrorProgress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[KMirroring: %d of %d package(s) done, %s sent", p.done, p.total, size(p.sent))
	p.shown = true
}

// line prints a line to out, clearing the progress line first.
func (p *mirrorProgress) line(out io.Writer, s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
	fmt.Fprintln(out, s)
}

func (p *mirrorProgress) stop() {
	close(p.quit)
	<-p.ended
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
