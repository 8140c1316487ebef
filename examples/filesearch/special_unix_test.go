//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFiles holds read_file, file_info and search_files to a root
// with a named pipe that nothing writes to: opening one for reading blocks
// in the kernel, beyond any context, so before open used O_NONBLOCK each
// read_file or file_info on it held a plugin thread for ever (the call
// itself only timed out). Each must refuse it at once, and search_files
// must pass over it.
func TestSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("no named pipes: %v", err)
	}
	s, err := newSearcher(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.root.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		tool string
		run  func() error
	}{
		{"read_file", func() error {
			_, err := s.ReadFile(ctx, ReadFileRequest{Path: "pipe", Limit: 10})
			return err
		}},
		{"file_info", func() error {
			_, err := s.FileInfo(ctx, FileInfoRequest{Path: "pipe"})
			return err
		}},
	} {
		done := make(chan error, 1)
		go func() { done <- tc.run() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "pipe is a named pipe, not a regular file") {
				t.Errorf("%s of a named pipe: %v, want it refused as a named pipe", tc.tool, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s of a named pipe still blocks after 5s", tc.tool)
		}
	}
	done := make(chan *SearchFilesResponse, 1)
	go func() {
		res, _ := s.SearchFiles(ctx, SearchFilesRequest{Query: "x", MaxResults: 10})
		done <- res
	}()
	select {
	case res := <-done:
		if res == nil || res.FilesSearched != 0 {
			t.Errorf("search_files over a named pipe: %+v, want nothing searched", res)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("search_files over a named pipe still blocks after 5s")
	}
}
