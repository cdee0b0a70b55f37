package extract

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// stagingPattern is the name of a staging file or directory for target:
// hidden, beside it, with the writing process's ID, so that what a killed
// run (SIGKILL, a crash: no clean-up ran) left can be told from what a
// running one is writing.
func stagingPattern(target string) string {
	return "." + filepath.Base(target) + ".tmp-" + strconv.Itoa(os.Getpid()) + "-*"
}

// removeStale removes the staging files and directories for target that
// processes no longer running left beside it.
func removeStale(target string) {
	dir, prefix := filepath.Dir(target), "."+filepath.Base(target)+".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processRunning(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}
