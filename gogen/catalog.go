package gogen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/atomicfile"
	"github.com/toolc/toolc/internal/inputfile"
)

// Catalog returns the generated files of every service of cat (see
// Files), with paths relative to the working directory, sorted; or none.
// When a service has names that Go cannot use, or two services would
// write one file, the error is a diag.List of every such problem, at the
// contracts' positions. Any other error is a handler directory that could
// not be read.
func Catalog(cat *catalog.Catalog) ([]File, error) {
	var (
		files []File
		errs  diag.List
		owner = map[string]string{} // path → service
	)
	clash := func(svc *catalog.Service, format string, args ...any) {
		errs = append(errs, diag.Diagnostic{Pos: position(svc.Pos), Message: fmt.Sprintf(format, args...)})
	}
	for _, svc := range cat.Services {
		if svc.Upstream != nil {
			continue // an upstream MCP server serves it: there is no Go side
		}
		path := Path(svc)
		if other, ok := owner[path]; ok {
			clash(svc, "services %s and %s have one handler directory, so both would generate %s", other, svc.Name, path)
			continue
		}
		owner[path] = svc.Name
		gen, err := Files(svc, ".")
		var list diag.List
		switch {
		case errors.As(err, &list):
			errs = append(errs, list...)
			continue
		case err != nil:
			return nil, fmt.Errorf("the handler of %s: %v", svc.Name, err)
		}
		for _, f := range gen {
			if other, ok := owner[f.Path]; ok && other != svc.Name {
				clash(svc, "services %s and %s would both generate %s", other, svc.Name, f.Path)
				continue
			}
			owner[f.Path] = svc.Name
			files = append(files, f)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// Stale names the files whose copy on disk is missing or differs, each
// followed by " (missing)" or " (out of date)": what toolc gen go --check
// reports.
func Stale(files []File) ([]string, error) {
	return StaleIn("", files)
}

// StaleIn is Stale for files whose paths are relative to dir: what toolc
// dev, whose working directory may be another, says after a reload.
func StaleIn(dir string, files []File) ([]string, error) {
	var stale []string
	for _, f := range files {
		path := f.Path
		if dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		old, err := inputfile.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			stale = append(stale, f.Path+" (missing)")
		case err != nil:
			return nil, err
		case !bytes.Equal(old, f.Source):
			stale = append(stale, f.Path+" (out of date)")
		}
	}
	return stale, nil
}

// Update writes the files that changed, each to a temporary name beside
// it and renamed, so that no reader sees half a file, and returns the
// paths it wrote. An unchanged file is left alone, so that watchers and
// builds see no edit.
func Update(files []File) (written []string, err error) {
	for _, f := range files {
		if old, err := inputfile.ReadFile(f.Path); err == nil && bytes.Equal(old, f.Source) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return written, err
		}
		if err := atomicfile.Write(f.Path, f.Source); err != nil {
			return written, err
		}
		written = append(written, f.Path)
	}
	return written, nil
}
