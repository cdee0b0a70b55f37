//go:build !unix

package extract

import "os"

// creationMode is mode: systems without a umask apply none.
func creationMode(mode os.FileMode) os.FileMode { return mode }
