// Package startup keeps the garbage collector from running while the
// program starts. Package initialisers (API schemes, tables, parsers)
// allocate a few MiB that stay live for the whole run, and the heap passes
// the collector's first goal (4 MiB) just as they finish: that one
// collection frees nothing and costs about two milliseconds, a fifth of
// `--help`. A short command (help, version, get) then never collects;
// a long one collects as usual once its heap has grown by Headroom.
//
// The package imports nothing but the runtime, so it initialises before
// the packages that allocate (Go initialises ready packages in import path
// order, and this path sorts before theirs); main calls Done first thing.
package startup

import (
	"runtime"
	"runtime/debug"
)

// Headroom is how far the memory in use may grow past what it is when
// main starts before the first collection: about what the collector's
// usual goal would have let it grow.
const Headroom = 4 << 20

// percent is the collector's setting before init turned it off: GOGC's,
// or 100.
var percent = debug.SetGCPercent(-1)

// firstGC is finalised by the first collection, which puts the usual
// setting back.
type firstGC struct {
	_ *firstGC // a pointer keeps it off the tiny allocator, whose objects may never be finalised
	_ [8]byte
}

// Done lets the collector run again: it stays off until the memory in use
// grows by Headroom (a memory limit triggers that first collection), then
// GOGC (or the default) and any GOMEMLIMIT apply as usual.
func Done() {
	if percent < 0 { // GOGC=off
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	limit := debug.SetMemoryLimit(-1) // the user's GOMEMLIMIT, or none
	first := int64(ms.Sys-ms.HeapReleased) + Headroom
	if first >= limit {
		debug.SetGCPercent(percent)
		return
	}
	debug.SetMemoryLimit(first)
	runtime.SetFinalizer(&firstGC{}, func(*firstGC) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}
