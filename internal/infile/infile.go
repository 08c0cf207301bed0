// Package infile reads the files a user names — experiment and machine
// files, Tcl scripts, grids, results, manifests — through one door that
// refuses what is not a regular file and reads at most a stated size.
//
// It is a package of its own because config, annotations, sweep and report
// all read user files and none of them may import another for it (config
// sits below everything; annotations and report must not see each other).
//
// A FIFO, a character device such as /dev/zero, a socket or a folder is
// refused before a byte is read: the file is opened without blocking (so a
// FIFO with no writer does not hang the open) and checked with fstat on the
// open descriptor, so what is read is what was checked. A regular file
// larger than the limit is refused with its size and the limit; one that
// grows past the limit while it is read is refused too.
package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Limits for the kinds of file simkron reads. They are far above any file
// a user writes by hand and far below what would exhaust memory.
const (
	// Config is the limit for experiment, machine and grid files (TOML).
	Config = 4 << 20
	// Script is the limit for a Tcl annotation script.
	Script = 1 << 20
	// Result is the limit for a result.json, a sweep point or a manifest.
	Result = 256 << 20
)

// ErrTooLarge is wrapped by the error for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is wrapped by the error for a file that is not a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

// Read returns the contents of the regular file at path, at most limit
// bytes. Every error is an *fs.PathError naming path.
func Read(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, kind(fi.Mode()))}
	}
	if fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLarge(fi.Size(), limit)}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLarge(int64(len(data)), limit)}
	}
	return data, nil
}

func tooLarge(size, limit int64) error {
	return fmt.Errorf("%w: %d bytes or more, and the limit for this kind of file is %d", ErrTooLarge, size, limit)
}

// kind names a non-regular file mode for a message.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file (mode " + m.String() + ")"
}
