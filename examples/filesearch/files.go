package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Bounds of read_file, list_directory and file_info, from their contracts.
const (
	maxReadLineChars = 2000      // read_file cuts longer lines
	maxWalkEntries   = 100_000   // a recursive listing stops walking after this many entries
	maxHashBytes     = 100 << 20 // file_info hashes no larger file
)

func (s *searcher) ReadFile(_ context.Context, req ReadFileRequest) (*ReadFileResponse, error) {
	p, err := clean(req.Path)
	if err != nil {
		return nil, err
	}
	f, err := s.open(p)
	if err != nil {
		return nil, explain(req.Path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, explain(req.Path, err)
	} else if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory; list it with list_directory", req.Path)
	} else if err := regular(req.Path, fi); err != nil {
		return nil, err
	}
	br, text, err := textReader(f)
	if err != nil {
		return nil, explain(req.Path, err)
	}
	if !text {
		return nil, fmt.Errorf("%s is not a text file (it has NUL bytes or is not UTF-8); file_info describes it", req.Path)
	}
	lines := lineReader{r: br, max: maxReadLineChars * 4}
	var kept []string
	total := 0
	for {
		line, ok, err := lines.next()
		if err != nil {
			return nil, explain(req.Path, err)
		}
		if !ok {
			break
		}
		if total >= req.Offset && len(kept) < req.Limit {
			kept = append(kept, cut(string(line), maxReadLineChars))
		}
		total++
	}
	out := &ReadFileResponse{Content: strings.Join(kept, "\n"), FirstLine: req.Offset + 1, TotalLines: total}
	if next := req.Offset + len(kept); len(kept) > 0 && next < total {
		out.Truncated, out.NextOffset = true, new(next)
	}
	return out, nil
}

type entry struct {
	name, kind string
	size       int64
}

// ListDirectory lists a directory. Its arrays are never null, even for an
// empty listing (ListDirectoryResponse.MarshalJSON).
func (s *searcher) ListDirectory(ctx context.Context, req ListDirectoryRequest) (*ListDirectoryResponse, error) {
	dir, err := clean(req.Path)
	if err != nil {
		return nil, err
	}
	for _, k := range req.Kinds {
		if k != "file" && k != "dir" && k != "symlink" {
			return nil, fmt.Errorf("kinds: %q is not a kind; use file, dir or symlink", k)
		}
	}
	var glob *regexp.Regexp
	if req.Glob != nil {
		if glob, err = globRegexp(*req.Glob); err != nil {
			return nil, err
		}
	}
	if fi, err := fs.Stat(s.fsys, dir); err != nil {
		return nil, explain(req.Path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a directory; file_info describes it", req.Path)
	}

	var entries []entry
	visited, truncated := 0, false
	err = fs.WalkDir(s.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil || p == dir:
			return nil
		case !req.IncludeHidden && strings.HasPrefix(d.Name(), "."):
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case visited == maxWalkEntries:
			truncated = true
			return fs.SkipAll
		}
		visited++
		e := entry{name: relative(dir, p), kind: "file"}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			e.kind = "symlink"
		case d.IsDir():
			e.kind = "dir"
		default:
			if info, err := d.Info(); err == nil {
				e.size = info.Size()
			}
		}
		if (len(req.Kinds) == 0 || slices.Contains(req.Kinds, e.kind)) && (glob == nil || glob.MatchString(e.name)) {
			if e.kind == "dir" {
				e.name += "/"
			}
			entries = append(entries, e)
		}
		if d.IsDir() && !req.Recursive {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil && err != fs.SkipAll {
		return nil, explain(req.Path, err)
	}

	// Directories first, then by name.
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(boolInt(a.kind != "dir"), boolInt(b.kind != "dir")), strings.Compare(a.name, b.name))
	})
	if len(entries) > req.MaxEntries {
		entries, truncated = entries[:req.MaxEntries], true
	}
	out := &ListDirectoryResponse{Truncated: truncated}
	for _, e := range entries {
		out.Names = append(out.Names, e.name)
		out.Kinds = append(out.Kinds, e.kind)
		out.Sizes = append(out.Sizes, int(e.size))
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *searcher) FileInfo(_ context.Context, req FileInfoRequest) (*FileInfoResponse, error) {
	p, err := clean(req.Path)
	if err != nil {
		return nil, err
	}
	fi, err := s.root.Lstat(p)
	if err != nil {
		return nil, explain(req.Path, err)
	}
	out := &FileInfoResponse{Kind: FileInfoKindFile, SizeBytes: int(fi.Size()), ModifiedAt: fi.ModTime().UTC().Format(time.RFC3339)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := s.root.Readlink(p)
		if err != nil {
			return nil, explain(req.Path, err)
		}
		out.Kind, out.LinkTarget = FileInfoKindSymlink, &target
		return out, nil
	case fi.IsDir():
		out.Kind, out.SizeBytes = FileInfoKindDir, 0
		return out, nil
	}
	if err := regular(req.Path, fi); err != nil {
		return nil, err
	}
	f, err := s.open(p)
	if err != nil {
		return nil, explain(req.Path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, explain(req.Path, err)
	} else if err := regular(req.Path, fi); err != nil {
		return nil, err // replaced since the Lstat
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(512)
	out.MIMEType = new(mimeType(p, head))
	// One pass reads the file for is_text and the hash; files too large to
	// hash are judged by their start.
	r := io.Reader(br)
	hash := sha256.New()
	if fi.Size() > maxHashBytes {
		r, hash = io.LimitReader(br, sniffBytes), nil
	}
	text := &textCheck{text: true}
	w := io.Writer(text)
	if hash != nil {
		w = io.MultiWriter(text, hash)
	}
	if _, err := io.Copy(w, r); err != nil {
		return nil, explain(req.Path, err)
	}
	out.IsText = text.isText(hash == nil)
	if hash != nil {
		out.SHA256 = new(hex.EncodeToString(hash.Sum(nil)))
	}
	return out, nil
}

// mimeType guesses a file's type from its first bytes, refined by its
// name when the content says only text or binary. A text file keeps a text
// type: go.mod is not audio/x-mod.
func mimeType(name string, head []byte) string {
	sniffed := http.DetectContentType(head)
	byExt := mime.TypeByExtension(path.Ext(name))
	switch {
	case byExt == "":
		return sniffed
	case sniffed == "application/octet-stream":
		return byExt
	case sniffed == "text/plain; charset=utf-8" && (strings.HasPrefix(byExt, "text/") || strings.HasPrefix(byExt, "application/")):
		return byExt
	}
	return sniffed
}
