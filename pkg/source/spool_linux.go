package source

import (
	"errors"
	"os"
	"syscall"
)

// sendFile copies the rest of src to dst with sendfile(2), which moves
// the file's pages to any file, pipe or socket inside the kernel.
// handled is false, with nothing written, when dst takes no sendfile (a
// terminal, a file opened to append): the caller copies it.
func sendFile(dst, src *os.File) (n int64, handled bool, err error) {
	out, err := dst.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	in := int(src.Fd())
	werr := out.Write(func(fd uintptr) bool {
		for {
			m, serr := syscall.Sendfile(int(fd), in, nil, spoolChunk)
			if m > 0 {
				n += int64(m)
			}
			switch {
			case errors.Is(serr, syscall.EINTR):
				continue
			case errors.Is(serr, syscall.EAGAIN):
				return false // wait until dst takes more
			case serr != nil:
				err = serr
				return true
			case m == 0:
				return true // the end of src
			}
		}
	})
	if n == 0 && err != nil && (errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP)) {
		return 0, false, nil
	}
	if errors.Is(err, syscall.EPIPE) {
		// The reader went away: a write says so as writes to stdout do
		// (a SIGPIPE for stdout, as without sendfile), or fails alike.
		_, err = dst.Write([]byte{0})
		return n, true, err
	}
	if err == nil {
		err = werr
	}
	if err != nil {
		err = &os.PathError{Op: "sendfile", Path: dst.Name(), Err: err}
	}
	return n, true, err
}
