package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"time"
)

// Bounds of search_files, from its contract.
const (
	maxSearchBytes = 10 << 20 // larger files are skipped
	maxLineChars   = 500      // a matching line is cut to this
)

// SearchFiles searches the files under the search root. Its arrays are
// never null, even without a match (SearchFilesResponse.MarshalJSON).
func (s *searcher) SearchFiles(ctx context.Context, req SearchFilesRequest) (*SearchFilesResponse, error) {
	dir, err := clean(req.Path)
	if err != nil {
		return nil, err
	}
	if fi, err := fs.Stat(s.fsys, dir); err != nil {
		return nil, explain(req.Path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("path %s is a file, not a directory; use glob to search one file", req.Path)
	}
	expr := req.Query
	if !req.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if !req.CaseSensitive {
		expr = "(?i)" + expr
	}
	query, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("query is not an RE2 regular expression: %v", err)
	}
	if req.Glob == "" {
		req.Glob = "**/*"
	}
	glob, err := globRegexp(req.Glob)
	if err != nil {
		return nil, err
	}
	var since time.Time
	if req.ModifiedWithin != nil {
		d, err := parseISODuration(*req.ModifiedWithin)
		if err != nil {
			return nil, fmt.Errorf("modified_within: %v", err)
		}
		since = s.now().Add(-d)
	}

	out := &SearchFilesResponse{}
	err = fs.WalkDir(s.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return nil // unreadable: skip it
		}
		if p != dir && skipName(d.Name(), d.IsDir(), req.IncludeHidden) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !glob.MatchString(relative(dir, p)) {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxSearchBytes || info.ModTime().Before(since) {
			return nil
		}
		return s.searchFile(p, query, req.MaxResults, out)
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return nil, err
	}
	return out, nil
}

// skipName reports whether a search skips an entry by its name: .git
// always, other names that start with a dot unless hidden ones are wanted.
func skipName(name string, isDir, hidden bool) bool {
	return isDir && name == ".git" || !hidden && strings.HasPrefix(name, ".")
}

// relative returns p, a path below dir, relative to dir.
func relative(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

// searchFile adds the matching lines of the text file p to out. It returns
// fs.SkipAll when out is full and a further match exists.
func (s *searcher) searchFile(p string, query *regexp.Regexp, limit int, out *SearchFilesResponse) error {
	f, err := s.open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil // replaced by something else since the walk saw it
	}
	br, text, err := textReader(f)
	if err != nil || !text {
		return nil
	}
	out.FilesSearched++
	lines := lineReader{r: br, max: maxSearchBytes + 1}
	for n := 1; ; n++ {
		line, ok, err := lines.next()
		if err != nil || !ok {
			return nil
		}
		if !query.Match(line) {
			continue
		}
		if len(out.Paths) == limit {
			out.Truncated = true
			return fs.SkipAll
		}
		out.Paths = append(out.Paths, p)
		out.LineNumbers = append(out.LineNumbers, n)
		out.Lines = append(out.Lines, cut(string(line), maxLineChars))
	}
}
