//go:build unix

package extract

import (
	"os"
	"sync"
	"syscall"
)

var (
	umaskOnce sync.Once
	umask     os.FileMode
)

// creationMode is mode as the process's umask lets a new file have it, as
// os.Create and os.Mkdir would: temporary files are made 0600 and 0700,
// and keep that mode unless told otherwise.
func creationMode(mode os.FileMode) os.FileMode {
	umaskOnce.Do(func() {
		// Reading the umask means setting it: set it back at once, before
		// anything of this process creates a file.
		old := syscall.Umask(0)
		syscall.Umask(old)
		umask = os.FileMode(old)
	})
	return mode &^ umask
}
