package startup

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var (
	sink [][]byte
	ran  bool
)

// TestCollectorOffUntilTheHeapGrows: the collector is off from init until
// Done; then it stays off while memory grows by well under Headroom, the
// first collection comes from the memory limit, and after it GOGC and
// the memory limit are what they were.
func TestCollectorOffUntilTheHeapGrows(t *testing.T) {
	if ran {
		t.Skip("init's setting is gone after the first run in this process")
	}
	ran = true
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set")
	}
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent at test start = %d, want -1 (off since init)", p)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	Done()
	if p := debug.SetMemoryLimit(-1); p == math.MaxInt64 {
		t.Fatal("Done set no memory limit for the first collection")
	}
	// A quarter of the headroom: no collection (the runtime starts the one
	// a memory limit calls for a little before the limit, not at it).
	for range Headroom / 4 / (64 << 10) {
		sink = append(sink, make([]byte, 64<<10))
	}
	runtime.ReadMemStats(&ms)
	if ms.NumGC != before {
		t.Errorf("%d collections within the headroom", ms.NumGC-before)
	}
	sink = nil
	for range 64 { // far past it
		sink = append(sink, make([]byte, 1<<20))
		sink = sink[len(sink)-1:]
	}
	runtime.ReadMemStats(&ms)
	if ms.NumGC == before {
		t.Fatal("no collection after 64 MiB")
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if debug.SetMemoryLimit(-1) == math.MaxInt64 {
			break
		}
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit after the first collection = %d, want none", l)
	}
	if p := debug.SetGCPercent(percent); p != percent || percent != 100 {
		t.Errorf("GC percent after the first collection = %d, want %d (100)", p, percent)
	}
}
