package source

import (
	"fmt"
	"io"
	"time"
)

// progressMin is the smallest download that earns a progress line.
const progressMin = 4 << 20

// progressReader reports how much of a download has arrived, at most every
// tick, on one terminal line that it ends when the download does.
type progressReader struct {
	r     io.Reader
	w     io.Writer
	what  string
	total int64
	done  int64
	last  time.Time
	tick  time.Duration
	ended bool
}

func withProgress(r io.Reader, w io.Writer, what string, total int64) io.Reader {
	if w == nil || total < progressMin {
		return r
	}
	return &progressReader{r: r, w: w, what: what, total: total, tick: 100 * time.Millisecond}
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	switch {
	case err == io.EOF || p.done >= p.total:
		p.end()
	case time.Since(p.last) >= p.tick:
		p.last = time.Now()
		p.print()
	}
	return n, err
}

func (p *progressReader) print() {
	pct := 100 * p.done / p.total
	fmt.Fprintf(p.w, "\r%s: %3d%% (%.1f / %.1f MB)", p.what, pct, float64(p.done)/1e6, float64(p.total)/1e6)
}

func (p *progressReader) end() {
	if p.ended {
		return
	}
	p.ended = true
	p.print()
	fmt.Fprintln(p.w)
}
