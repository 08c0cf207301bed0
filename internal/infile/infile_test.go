package infile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"simkron/internal/infile"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.toml")
	if err := os.WriteFile(small, []byte("a = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, make([]byte, 101), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		want    string // contents, when no error
		err     error
		message string
	}{
		{path: small, want: "a = 1\n"},
		{path: big, err: infile.ErrTooLarge, message: "101 bytes or more, and the limit for this kind of file is 100"},
		{path: fifo, err: infile.ErrNotRegular, message: "a named pipe (FIFO)"},
		{path: "/dev/zero", err: infile.ErrNotRegular, message: "a character device"},
		{path: dir, err: infile.ErrNotRegular, message: "a folder"},
		{path: filepath.Join(dir, "nosuch"), err: os.ErrNotExist, message: "no such file"},
	} {
		got, err := infile.Read(tc.path, 100)
		if tc.err == nil {
			if err != nil || string(got) != tc.want {
				t.Errorf("Read(%s) = %q, %v; want %q", tc.path, got, err, tc.want)
			}
			continue
		}
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.message) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Read(%s): %v; want an error wrapping %v that says %q and names the file", tc.path, err, tc.err, tc.message)
		}
	}
}
