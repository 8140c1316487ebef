// Package contentfile reads the files that a contract names beside itself,
// the content of static resources and of prompt messages, the one way both
// toolc check and the server do: a relative path that stays inside the
// contract's directory (no "..", no symbolic link out of it, which os.Root
// refuses), a regular file, at most MaxSize bytes.
package contentfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/toolc/toolc/internal/inputfile"
)

// MaxSize is the largest file a contract may serve: a resource or a
// message travels whole in one JSON-RPC message, base64 for binary, and
// a client holds it in memory.
const MaxSize = 4 << 20

// Check opens name below dir and returns its size, or an error that says
// what is wrong with the path, the file or its size.
func Check(dir, name string) (int64, error) {
	f, info, err := open(dir, name)
	if err != nil {
		return 0, err
	}
	f.Close()
	return info.Size(), nil
}

// Read reads name below dir, within MaxSize, held to what Check checks.
func Read(dir, name string) ([]byte, error) {
	f, info, err := open(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have grown since Stat: read at most one byte past the
	// bound, to tell.
	data, err := io.ReadAll(io.LimitReader(f, min(info.Size(), MaxSize)+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %v", name, err)
	}
	if len(data) > MaxSize {
		return nil, tooLarge(name, int64(len(data)))
	}
	return data, nil
}

func open(dir, name string) (*os.File, fs.FileInfo, error) {
	if err := checkPath(name); err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the contract's directory: %v", err)
	}
	defer root.Close()
	// A FIFO blocks the open until something writes to it, for ever if
	// nothing does (a content file replaced by one while serving): the
	// name is checked before it is opened, and it is opened with
	// O_NONBLOCK, so that one swapped in between cannot block either; the
	// open file is checked again below.
	st, err := root.Stat(path.Clean(name))
	if err == nil && !st.Mode().IsRegular() {
		return nil, nil, notRegular(name, st.Mode())
	}
	var file *os.File
	if err == nil {
		file, err = root.OpenFile(path.Clean(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		var pe *fs.PathError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("file %s does not exist beside the contract", name)
		case errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes"):
			return nil, nil, fmt.Errorf("file %s leaves the contract's directory through a symbolic link; content must live beside the contract", name)
		}
		return nil, nil, fmt.Errorf("file %s: %v", name, err)
	}
	info, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, nil, fmt.Errorf("file %s: %v", name, err)
	}
	if !info.Mode().IsRegular() {
		file.Close()
		return nil, nil, notRegular(name, info.Mode())
	}
	if info.Size() > MaxSize {
		file.Close()
		return nil, nil, tooLarge(name, info.Size())
	}
	return file, info, nil
}

func notRegular(name string, mode fs.FileMode) error {
	return &inputfile.NotRegularError{Name: name, Mode: mode}
}

// checkPath refuses a path that is not relative and slash-separated below
// the directory: absolute, with a "..", a backslash or a NUL.
func checkPath(name string) error {
	switch {
	case name == "":
		return errors.New("the file name is empty")
	case strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") || len(name) > 1 && name[1] == ':':
		return fmt.Errorf("file %q must be a slash-separated path relative to the contract's directory", name)
	case name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "/../") || strings.HasSuffix(name, "/.."):
		return fmt.Errorf("file %q leaves the contract's directory; content must live beside the contract", name)
	}
	return nil
}

func tooLarge(name string, size int64) error {
	return fmt.Errorf("file %s is %d bytes, over the %d MiB that a contract may serve; serve it from a handler, in parts", name, size, MaxSize>>20)
}

// MIMEType returns the MIME type of a file by its extension, from a fixed
// table (the system's tables differ from machine to machine, and the
// catalog must not), or "" for an extension it does not know.
func MIMEType(name string) string {
	return mimeTypes[strings.ToLower(path.Ext(name))]
}

var mimeTypes = map[string]string{
	".txt": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown", ".csv": "text/csv",
	".html": "text/html", ".htm": "text/html", ".css": "text/css", ".xml": "application/xml",
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
	".js": "text/javascript", ".go": "text/x-go", ".py": "text/x-python", ".sql": "application/sql",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".svg": "image/svg+xml", ".pdf": "application/pdf",
	".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".flac": "audio/flac",
}

// IsText reports whether content of the MIME type travels as text rather
// than base64: text/*, JSON, XML, YAML, JavaScript and SQL.
func IsText(mimeType string) bool {
	t, _, _ := strings.Cut(mimeType, ";")
	t = strings.TrimSpace(strings.ToLower(t))
	switch {
	case strings.HasPrefix(t, "text/"),
		strings.HasSuffix(t, "+json"), strings.HasSuffix(t, "+xml"),
		t == "application/json", t == "application/xml", t == "application/yaml",
		t == "application/javascript", t == "application/sql", t == "image/svg+xml":
		return true
	}
	return false
}
