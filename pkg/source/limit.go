package source

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// DefaultMaxUncompressed bounds the decompressed bytes read from a package's
// layers: generous for real packages (provider-aws is ~7 MB), and a stop for
// decompression bombs.
const DefaultMaxUncompressed int64 = 1 << 30

// limitError reports that a read passed the decompressed-size limit.
type limitError struct {
	what  string
	limit int64
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s decompresses to more than %d bytes (raise the limit with --max-size if the package is really that large)", e.what, e.limit)
}

// limitReader fails, rather than stopping quietly, past its limit.
type limitReader struct {
	r     io.Reader
	left  int64
	limit int64
	what  string
}

func newLimitReader(r io.Reader, limit int64, what string) *limitReader {
	return &limitReader{r: r, left: limit, limit: limit, what: what}
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more than allowed tells a stream that ends exactly at the
		// limit from one that goes on.
		var b [1]byte
		if n, _ := l.r.Read(b[:]); n > 0 {
			return 0, &limitError{what: l.what, limit: l.limit}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// verifyReader hashes what passes through it; verify compares the total
// with the digest and size the manifest promised, after draining the rest.
type verifyReader struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	want v1.Hash
	size int64
	what string
}

func newVerifyReader(r io.Reader, want v1.Hash, size int64, what string) (*verifyReader, error) {
	h, err := hasher(want, what)
	if err != nil {
		return nil, err
	}
	return &verifyReader{r: r, h: h, want: want, size: size, what: what}, nil
}

// hasher is the hash a digest names: sha256 or sha512. Content under a
// digest of another algorithm cannot be verified, and is refused.
func hasher(d v1.Hash, what string) (hash.Hash, error) {
	switch d.Algorithm {
	case "sha256":
		return sha256.New(), nil
	case "sha512":
		return sha512.New(), nil
	}
	return nil, fmt.Errorf("%s: its digest %s uses %q, which cannot be verified here (sha256 and sha512 can): refusing unverified content", what, d, d.Algorithm)
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.size > 0 && v.n > v.size {
		return n, fmt.Errorf("%s is larger than the %d bytes its descriptor states", v.what, v.size)
	}
	return n, err
}

// verify drains the stream and checks its digest and size.
func (v *verifyReader) verify() error {
	if _, err := io.Copy(io.Discard, v); err != nil {
		return readError(v.what, err)
	}
	return v.check()
}

// check compares what was read so far with the digest and size.
func (v *verifyReader) check() error {
	got := hex.EncodeToString(v.h.Sum(nil))
	if got != v.want.Hex {
		return fmt.Errorf("%s is corrupt: its content hashes to %s:%s, not %s", v.what, v.want.Algorithm, got, v.want)
	}
	if v.size > 0 && v.n != v.size {
		return fmt.Errorf("%s is %d bytes, not the %d its descriptor states", v.what, v.n, v.size)
	}
	return nil
}

// CheckDigest checks content read whole (a manifest) against its digest:
// an OCI layout's blobs, for one, come from disk unchecked.
func CheckDigest(raw []byte, want v1.Hash, what string) error {
	vr, err := newVerifyReader(bytes.NewReader(raw), want, int64(len(raw)), what)
	if err != nil {
		return err
	}
	return vr.verify()
}

// VerifyingReader reads r, hashing what passes, and at its end fails
// instead of ending unless it read exactly size bytes (0: any number) that
// hash to want: whoever copies it to its end has copied the content the
// digest names, and a copy that fails can be thrown away.
func VerifyingReader(r io.Reader, want v1.Hash, size int64, what string) (io.Reader, error) {
	vr, err := newVerifyReader(r, want, size, what)
	if err != nil {
		return nil, err
	}
	return checkAtEOF{vr}, nil
}

type checkAtEOF struct{ v *verifyReader }

func (c checkAtEOF) Read(p []byte) (int, error) {
	n, err := c.v.Read(p)
	if err == io.EOF {
		if cerr := c.v.check(); cerr != nil {
			return n, cerr
		}
	}
	return n, err
}
