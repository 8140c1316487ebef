// Package open opens the task store that a URL names, for toolc serve's
// and toolc dev's --task-store: URL for memory:, file:PATH (boltstore)
// and redis://HOST:PORT/DB (redisstore), and Default for toolc serve's
// store when no URL is given. It is apart from taskstore so that a
// program that keeps its tasks in memory, or in a store of its own, links
// neither bbolt nor the Redis client.
package open

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/boltstore"
	"github.com/toolc/toolc/taskstore/redisstore"
)

// URL opens the store that url names: memory:, file:PATH or
// redis://HOST:PORT/DB.
func URL(ctx context.Context, url string) (taskstore.Store, error) {
	switch {
	case url == "memory:":
		return taskstore.NewMemory(), nil
	case strings.HasPrefix(url, "file:"):
		path := strings.TrimPrefix(url, "file:")
		if path == "" {
			return nil, fmt.Errorf("file: needs a path, as in file:/var/lib/toolc/tasks.db")
		}
		return boltstore.Open(path)
	case strings.HasPrefix(url, "redis://"):
		return redisstore.Open(ctx, url)
	}
	return nil, fmt.Errorf("unknown store: give memory:, file:PATH or redis://HOST:PORT/DB")
}

// Default opens the store of a server on addr that was given no URL: the
// file DefaultFile names, made by the server's first task (a server whose
// calls never become tasks leaves no file), or opened at once if it
// exists. Where that file cannot be made (a container without $HOME, or
// with a read-only file system), it returns a store in memory, and why:
// the server is served anyway, and says so.
func Default(addr net.Addr) (store taskstore.Store, inMemory error) {
	file, err := DefaultFile(addr)
	if err == nil {
		if store, err = lazy(file); err == nil {
			return store, nil
		}
	}
	return taskstore.NewMemory(), err
}

// DefaultFile is where a server on addr keeps its tasks without a URL: in
// the user's state directory ($XDG_STATE_HOME, else ~/.local/state), one
// file per address served, so that a restart on the same address finds
// its tasks, and two servers never share a file.
func DefaultFile(addr net.Addr) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no state directory: %v", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	name := strings.NewReplacer(":", "-", "[", "", "]", "", "%", "-").Replace(addr.String())
	return filepath.Join(dir, "toolc", "tasks", name+".db"), nil
}
