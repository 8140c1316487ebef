package rpc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/toolc/toolc/internal/inputfile"
)

// A pinned binary is the checksummed plugin binary in a form that cannot
// change between the check and the exec. Checking the file at a path and
// then executing the path would run whatever the path names by then: a
// rename in the cache directory (a rebuild, another toolc, anyone who may
// write there) between the two runs a binary nobody pinned. So the
// checksum is taken from an open file, and what runs is that file: on
// Linux through /proc/self/fd, which names the open file itself; where
// that is missing, a private copy, written from the open file while it is
// hashed, in a directory of its own that only this user can enter.
type pinned struct {
	// exe is the name to execute.
	exe string
	// release closes the file, or removes the copy, once the process
	// has started (it may be called again, and more than once).
	release func()
}

// testHookPinned, when set, runs after the binary at path is verified and
// before it is executed: the tests swap the binary there.
var testHookPinned func(path string)

// errChecksum is a binary whose SHA-256 is not the pinned one.
type errChecksum struct{ got, want []byte }

func (e *errChecksum) Error() string {
	return fmt.Sprintf("checksum mismatch: binary has sha256 %s, want %s", hex.EncodeToString(e.got), hex.EncodeToString(e.want))
}

// pin opens the regular file path, checks that its SHA-256 is want, and
// returns what to execute in its place.
func pin(path string, want []byte) (*pinned, error) {
	// inputfile opens only a regular file, and never blocks: a FIFO or a
	// device put in the binary's place is refused, not read.
	f, _, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checksum: %w", err)
	}
	if p := pinFD(f); p != nil {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			f.Close()
			return nil, fmt.Errorf("checksum: %w", err)
		}
		if got := h.Sum(nil); !bytes.Equal(got, want) {
			f.Close()
			return nil, &errChecksum{got, want}
		}
		return p, nil
	}
	defer f.Close()
	return pinCopy(f, filepath.Base(path), want)
}

// pinCopy copies the open binary f into a new private directory, hashing
// what it writes, and pins the copy.
func pinCopy(f *os.File, name string, want []byte) (*pinned, error) {
	dir, err := os.MkdirTemp("", "toolc-plugin-") // 0700
	if err != nil {
		return nil, fmt.Errorf("a private copy of the binary: %w", err)
	}
	// Removed once the process has started, which a Unix system allows;
	// Windows does not while it runs, so Kill tries again.
	remove := func() { os.RemoveAll(dir) }
	exe := filepath.Join(dir, name)
	out, err := os.OpenFile(exe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		remove()
		return nil, fmt.Errorf("a private copy of the binary: %w", err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), f)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(exe, 0o500)
	}
	if err != nil {
		remove()
		return nil, fmt.Errorf("a private copy of the binary: %w", err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		remove()
		return nil, &errChecksum{got, want}
	}
	return &pinned{exe: exe, release: remove}, nil
}
