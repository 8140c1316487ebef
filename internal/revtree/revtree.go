// Package revtree materializes the tree of a git revision in a temporary
// directory, so that the contracts as they were at the revision can be
// compiled from disk: Materialize runs git archive and writes what it
// holds with Extract.
//
// The tree is read as hostile input. A revision can hold anything git
// objects can say, including trees that no checkout would write: symbolic
// links that point outside, a link and a directory of the same name (so
// that l1 -> . and then l1/l2 -> .. lead out one level at a time), and
// names with "..". Extract writes through an os.Root, so that no entry,
// whatever its name and whatever the links before it, can write outside
// the directory; an entry that tries is an error. Afterwards, every
// symbolic link that does not resolve inside the tree is removed, with a
// note in Tree.Skipped, so that reading the tree from disk (as the
// compiler does, following links) cannot leave it either.
//
// What Extract writes is bounded in total, not only file by file: a tree
// can name one blob, or one subtree, any number of times, so that a
// revision of a few KiB archives to gigabytes. Past MaxBytes of files or
// MaxEntries entries (raised by $TOOLC_MAX_TREE and
// $TOOLC_MAX_TREE_ENTRIES), Extract stops with a *TooLargeError, and
// Materialize removes what it wrote.
package revtree

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/toolc/toolc/internal/inputfile"
)

// Errors of Materialize that say why ref is not a revision at all.
var (
	ErrNoGit         = errors.New("git is not installed")
	ErrNotRepository = errors.New("not in a git repository")
	ErrNoRevision    = errors.New("no such git revision")
)

// The bounds on what Extract writes of one tree, unless the environment
// sets others: far more than the contracts of a repository need, and far
// less than a crafted revision would write.
const (
	DefaultMaxBytes   = 512 << 20
	DefaultMaxEntries = 100_000
)

// The environment variables that set the bounds: a size as
// $TOOLC_MAX_INPUT takes it (512MiB, 2GiB), and a number of entries.
const (
	MaxBytesEnv   = "TOOLC_MAX_TREE"
	MaxEntriesEnv = "TOOLC_MAX_TREE_ENTRIES"
)

// TooLargeError is a tree over one of the bounds. Nothing past the bound
// was written.
type TooLargeError struct {
	// Entries is set when the bound on entries was reached, else the one
	// on bytes.
	Entries bool
	Limit   int64
}

func (e *TooLargeError) Error() string {
	if e.Entries {
		return fmt.Sprintf("the revision's tree has more than %d entries, the limit on what toolc writes of a revision (set %s to raise it, as in %s=%d)",
			e.Limit, MaxEntriesEnv, MaxEntriesEnv, 4*e.Limit)
	}
	return fmt.Sprintf("the revision's files come to more than %s, the limit on what toolc writes of a revision (a tree can name one file many times); set %s to raise it, as in %s=%s",
		inputfile.FormatSize(e.Limit), MaxBytesEnv, MaxBytesEnv, inputfile.FormatSize(4*e.Limit))
}

// limits returns the bounds on bytes and entries, from the environment or
// the defaults.
func limits() (maxBytes, maxEntries int64, err error) {
	maxBytes, maxEntries = DefaultMaxBytes, DefaultMaxEntries
	if s := strings.TrimSpace(os.Getenv(MaxBytesEnv)); s != "" {
		if maxBytes, err = inputfile.ParseSize(s); err != nil {
			return 0, 0, fmt.Errorf("$%s: %v", MaxBytesEnv, err)
		}
	}
	if s := strings.TrimSpace(os.Getenv(MaxEntriesEnv)); s != "" {
		if maxEntries, err = strconv.ParseInt(s, 10, 64); err != nil || maxEntries <= 0 {
			return 0, 0, fmt.Errorf("$%s: %q is not a number of entries: give a positive whole number, such as 200000", MaxEntriesEnv, s)
		}
	}
	return maxBytes, maxEntries, nil
}

// Tree is a revision's tree written to a temporary directory.
type Tree struct {
	// Root is the directory that holds the tree: the top of the
	// repository as it was at the revision.
	Root string
	// Dir is where, below Root, the working directory of Materialize
	// is in the repository. It need not exist at the revision.
	Dir string
	// Prefix is Dir relative to Root, with slashes ("api/"; "" at the
	// top).
	Prefix string
	// Commit is the revision's full commit id.
	Commit string
	// Skipped says, one sentence each, what of the tree was not written:
	// symbolic links that lead outside it, hard links, devices.
	Skipped []string
}

// Remove deletes the tree.
func (t *Tree) Remove() error { return os.RemoveAll(t.Root) }

// Materialize writes the tree of revision ref, of the git repository that
// holds wd, into a new temporary directory. The caller removes it with
// Remove. The errors ErrNoGit, ErrNotRepository and ErrNoRevision say that
// ref cannot be read as a revision; any other error is a failure to write
// it.
func Materialize(ctx context.Context, wd, ref string) (*Tree, error) {
	if strings.HasPrefix(ref, "-") {
		return nil, ErrNoRevision // git would read it as an option
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	top, err := git(ctx, wd, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is %w", wd, ErrNotRepository)
	}
	sha, err := git(ctx, wd, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return nil, ErrNoRevision
	}
	prefix, err := git(ctx, wd, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "toolc-rev-")
	if err != nil {
		return nil, err
	}
	t := &Tree{Root: tmp, Dir: filepath.Join(tmp, filepath.FromSlash(prefix)), Prefix: prefix, Commit: sha}
	if t.Skipped, err = archive(ctx, top, sha, tmp); err != nil {
		t.Remove()
		return nil, err
	}
	return t, nil
}

// git runs git in dir and returns its output, trimmed. An error carries
// git's own message.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], msg)
		}
		return "", fmt.Errorf("git %s: %v", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}

// archive writes the tree of a commit into dir. It runs at the top of the
// repository: in a subdirectory, git archive writes only that.
func archive(ctx context.Context, top, sha, dir string) ([]string, error) {
	// An archive that Extract refuses is not read to its end: git is
	// stopped instead.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", top, "archive", "--format=tar", sha)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	skipped, xerr := Extract(out, dir)
	if xerr != nil {
		cancel()
	} else {
		io.Copy(io.Discard, out) // tar's end-of-archive padding
	}
	if err := cmd.Wait(); err != nil && xerr == nil {
		return nil, fmt.Errorf("git archive: %s", strings.TrimSpace(stderr.String()))
	}
	return skipped, xerr
}

// Extract writes the directories, regular files and symbolic links of a
// tar archive into dir, an existing directory, and returns what it left
// out. Nothing is written outside dir: every write goes through an
// os.Root, and an entry whose name or whose path through earlier links
// leads outside is an error. Symbolic links that do not resolve inside dir
// once everything is written (they point outside, are absolute, dangle or
// loop) are removed again and listed; hard links, devices and FIFOs are not
// written, and listed. File modes are not kept beyond the executable bit.
//
// A regular file over inputfile's limit is not written either, and
// listed: toolc would not read it (a contract file that large is refused),
// and a revision's large files need not fill the disk. In all, Extract
// writes at most MaxBytes of files and reads at most MaxEntries entries
// (see limits): past either it stops with a *TooLargeError, and what it
// wrote is the caller's to remove.
func Extract(r io.Reader, dir string) (skipped []string, err error) {
	limit, err := inputfile.Limit()
	if err != nil {
		return nil, err
	}
	maxBytes, maxEntries, err := limits()
	if err != nil {
		return nil, err
	}
	var written, entries int64
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var links []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the archive: %v", err)
		}
		// Every entry counts, the ones not written too: each costs a
		// header's worth of work, and a crafted tree can hold millions.
		if entries++; entries > maxEntries {
			return nil, &TooLargeError{Entries: true, Limit: maxEntries}
		}
		switch h.Typeflag {
		case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
			continue // metadata (git archive writes the commit id in one)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if !fs.ValidPath(name) || name == "." {
			// Absolute, "..", empty elements: git writes no such name, so
			// the archive is crafted.
			return nil, fmt.Errorf("the archive holds an entry named %q, which is not a path inside the tree", h.Name)
		}
		local := filepath.FromSlash(name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = root.MkdirAll(local, 0o755)
		case tar.TypeReg:
			if h.Size > limit {
				skipped = append(skipped, fmt.Sprintf("%s: %d bytes, over the %s limit on input, not written", name, h.Size, inputfile.FormatSize(limit)))
				continue
			}
			if written += h.Size; written > maxBytes {
				return nil, &TooLargeError{Limit: maxBytes}
			}
			err = writeFile(root, local, tr, h.FileInfo().Mode())
		case tar.TypeSymlink:
			if err = mkdirParent(root, local); err == nil {
				err = root.Symlink(h.Linkname, local)
			}
			if err == nil {
				links = append(links, name)
			}
		case tar.TypeLink:
			skipped = append(skipped, fmt.Sprintf("%s: a hard link, not written", name))
		default:
			skipped = append(skipped, fmt.Sprintf("%s: not a file, a directory or a symbolic link (tar type %q), not written", name, h.Typeflag))
		}
		if err != nil {
			return nil, fmt.Errorf("the archive's entry %q: %w", name, explain(err))
		}
	}
	// Only now is it known where each link leads: a later entry can make
	// an earlier link's target, or replace a directory on its way. Check
	// every link before removing any, so that what is checked is the tree
	// as the archive made it.
	var out []string
	for _, name := range links {
		local := filepath.FromSlash(name)
		if _, err := root.Stat(local); err != nil {
			target, _ := root.Readlink(local)
			out = append(out, fmt.Sprintf("%s: a symbolic link to %q, which %s, not written", name, target, linkProblem(err)))
		}
	}
	for _, s := range out {
		name, _, _ := strings.Cut(s, ": ")
		if err := root.Remove(filepath.FromSlash(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return append(skipped, out...), nil
}

// writeFile writes a regular file of the archive. A file of the same name,
// earlier in a crafted archive, is replaced; a link in its place is
// followed only inside the root.
func writeFile(root *os.Root, name string, r io.Reader, mode fs.FileMode) error {
	if err := mkdirParent(root, name); err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func mkdirParent(root *os.Root, name string) error {
	if dir := filepath.Dir(name); dir != "." {
		return root.MkdirAll(dir, 0o755)
	}
	return nil
}

// explain turns os.Root's refusal into words: the entry's path goes
// through a link that leads outside.
func explain(err error) error {
	if isEscape(err) {
		return errors.New("its path leads outside the tree through a symbolic link; the revision's tree is crafted to write elsewhere, and nothing was written outside")
	}
	return err
}

func linkProblem(err error) string {
	switch {
	case isEscape(err):
		return "leads outside the tree"
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist in the tree"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return "cannot be followed (" + pe.Err.Error() + ")"
	}
	return "cannot be followed (" + err.Error() + ")"
}

// isEscape reports os.Root's error for a path that leaves the root. It has
// no exported sentinel; its text is fixed in the os package.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
