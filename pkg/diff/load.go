package diff

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Parse decodes the documents of two packages (from xpkg.Split) for
// Compare. A document byte-for-byte identical in both is parsed once and
// shared, which Compare then skips at once; the others are parsed on every
// CPU, largest first so that no CPU is left with the last big one.
func Parse(oldDocs, newDocs [][]byte, limits xpkg.Limits) (old, new *xpkg.Package, err error) {
	type job struct {
		raw  []byte
		side string
		i    int
		obj  *xpkg.Object
		err  error
	}
	seen := make(map[string]*job, len(oldDocs))
	var jobs []*job
	oldJobs := make([]*job, len(oldDocs))
	for i, raw := range oldDocs {
		j := &job{raw: raw, side: "old", i: i}
		if prev, ok := seen[string(raw)]; ok {
			j = prev
		} else {
			seen[string(raw)] = j
			jobs = append(jobs, j)
		}
		oldJobs[i] = j
	}
	newJobs := make([]*job, len(newDocs))
	for i, raw := range newDocs {
		j, ok := seen[string(raw)]
		if !ok {
			j = &job{raw: raw, side: "new", i: i}
			jobs = append(jobs, j)
		}
		newJobs[i] = j
	}
	bySize := slices.Clone(jobs)
	slices.SortFunc(bySize, func(a, b *job) int { return len(b.raw) - len(a.raw) })
	parallel(len(bySize), func(k int) {
		j := bySize[k]
		j.obj, j.err = xpkg.DecodeDocument(j.i, j.raw, limits)
	})
	collect := func(side string, js []*job) (*xpkg.Package, error) {
		var objs []*xpkg.Object
		for _, j := range js {
			if j.err != nil {
				return nil, fmt.Errorf("%s package: %w", side, j.err)
			}
			if j.obj != nil {
				objs = append(objs, j.obj)
			}
		}
		return xpkg.NewPackage(objs), nil
	}
	if old, err = collect("old", oldJobs); err != nil {
		return nil, nil, err
	}
	if new, err = collect("new", newJobs); err != nil {
		return nil, nil, err
	}
	return old, new, nil
}

// parallel calls f(0) … f(n-1) on every CPU and waits for them.
func parallel(n int, f func(int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), max(n, 1)) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
