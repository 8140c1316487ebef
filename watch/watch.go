// Package watch reports changed files under a set of directory trees, one
// batch per burst of edits.
//
//	w, err := watch.New([]string{"./examples"}, watch.Options{})
//	for batch := range w.Batches() {
//		fmt.Println(batch.Paths) // files whose content changed, appeared or vanished
//	}
//
// It watches every directory recursively with fsnotify, adding new
// directories as they appear. Events are debounced: a batch is sent once
// no event has arrived for Options.Debounce. Each batch is then checked
// against content hashes, so that a save that changes nothing (touch, an
// editor writing the same bytes, Chmod) sends nothing, and an editor's
// atomic save, `sed -i`, or a `git checkout` of many files send exactly
// one batch. When the kernel's event queue overflows, the whole tree is
// rescanned. Options.Poll replaces fsnotify with periodic rescans, for
// file systems without inotify.
//
// While the reader is busy, batches merge into one, which it receives
// when it is ready. A root that is a symlink is followed; symlinks inside
// the trees are not, as the go command does not follow them in ./...
// patterns. A root that vanishes (the project moved away) is looked for
// again, and watched again with all its files reported when it returns.
//
// Besides the trees, SetDirs watches single directories, not their
// subdirectories, and can change them while the watcher runs: toolc dev
// watches so the local packages that a handler imports.
package watch

import (
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/toolc/toolc/internal/inputfile"
)

// Options configure a Watcher.
type Options struct {
	// Debounce is how long the tree must be quiet before a batch is sent.
	// Default 50ms: long enough to gather an editor's save or a checkout
	// on a busy machine, short enough that a reload follows an edit well
	// within 200ms.
	Debounce time.Duration
	// Poll, if set, rescans the trees at this interval instead of using
	// fsnotify.
	Poll time.Duration
	// Ignore reports whether to skip a file or directory, in addition to
	// the defaults (see Ignored).
	Ignore func(path string, isDir bool) bool
}

// Batch is the set of files that changed during one burst of events.
type Batch struct {
	// Paths are absolute, sorted and unique: files whose content changed,
	// that appeared, or that vanished. They are named under the roots as
	// given: a root that is a symlink is watched where it leads, and its
	// files are reported under the link's name.
	Paths []string
	// Rescan is set when the batch came from a full rescan after the
	// event queue overflowed.
	Rescan bool
}

// Watcher watches directory trees.
type Watcher struct {
	opts  Options
	roots []string // where the trees are: the roots given, symlinks resolved
	// given are the roots as given, by index in roots: a root that is, or
	// lies under, a symlink is walked and watched where it leads, and
	// reported under the name it was given.
	given   []string
	fsw     *fsnotify.Watcher // nil when polling
	batches chan Batch
	errs    chan error
	done    chan struct{}
	wg      sync.WaitGroup

	// The state below is the loop's: only the goroutine that runs loop
	// (or poll) reads or writes it, and New before it starts that
	// goroutine. The exported methods reach it only through channels
	// (SetDirs) or not at all (Batches, Errors, Close), so it needs no
	// lock.
	hashes map[string]fileState // every watched file
	dirs   map[string]bool      // every directory watched as part of a tree
	// flat are the directories that SetDirs watches on their own: by the
	// name given, where it leads (symlinks resolved; "" while it does not
	// exist). flatWatched are the resolved ones that have a watch.
	flat        map[string]string
	flatWatched map[string]bool
	setDirs     chan setDirs
}

// setDirs is a SetDirs call, handed to the loop goroutine.
type setDirs struct {
	dirs []string
	done chan struct{}
}

// Ignored is the default filter: hidden files and directories (.git,
// .cache, editor swap files), Go vendor and node_modules directories,
// editor backups and temporaries.
func Ignored(path string, isDir bool) bool {
	base := filepath.Base(path)
	if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") && isDir {
		return true
	}
	if isDir {
		return base == "node_modules" || base == "vendor"
	}
	return strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".swp") ||
		strings.HasSuffix(base, ".swx") || strings.HasPrefix(base, "#") || base == "4913"
}

// New starts watching the directory trees under roots.
func New(roots []string, opts Options) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	w := &Watcher{
		opts: opts,
		// Unbuffered: a batch the reader is not ready for waits in the
		// loop, where later batches merge into it (see pending).
		batches: make(chan Batch),
		errs:    make(chan error, 16),
		done:    make(chan struct{}),
		hashes:  map[string]fileState{},
		dirs:    map[string]bool{},

		flat:        map[string]string{},
		flatWatched: map[string]bool{},
		setDirs:     make(chan setDirs),
	}
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		real := abs
		if p, err := filepath.EvalSymlinks(abs); err == nil {
			real = p
		}
		w.roots = append(w.roots, real)
		w.given = append(w.given, abs)
	}
	if opts.Poll <= 0 {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, err
		}
		w.fsw = fsw
	}
	for _, r := range w.roots {
		if err := w.scan(r, nil, false); err != nil {
			w.Close()
			return nil, err
		}
	}
	w.wg.Add(1)
	if w.fsw != nil {
		go w.loop()
	} else {
		go w.poll()
	}
	return w, nil
}

// Batches returns the channel of batches. It is closed by Close.
func (w *Watcher) Batches() <-chan Batch { return w.batches }

// Errors returns errors that did not stop the watcher, such as a
// directory that could not be read.
func (w *Watcher) Errors() <-chan error { return w.errs }

// SetDirs sets the directories watched on their own, besides the trees:
// the files directly in each, not its subdirectories. It replaces the set
// of the previous call, and returns once the watches are in place. The
// current content of the files of a directory added is recorded, not
// reported: a batch reports what changes after SetDirs returns. A
// directory that does not exist, or vanishes, is looked for again, and
// its files reported when it appears; one named through a symlink is
// watched where the link leads and reported under the name given.
// A directory may also lie in a tree: removing it from the set then
// leaves it watched with its tree.
func (w *Watcher) SetDirs(dirs []string) {
	req := setDirs{done: make(chan struct{})}
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			req.dirs = append(req.dirs, abs)
		}
	}
	select {
	case w.setDirs <- req:
		<-req.done
	case <-w.done:
	}
}

// applyDirs makes the set of flat directories dirs (see SetDirs).
func (w *Watcher) applyDirs(dirs []string) {
	want := map[string]bool{}
	for _, d := range dirs {
		want[d] = true
	}
	for given, real := range w.flat {
		if want[given] {
			continue
		}
		delete(w.flat, given)
		if real == "" || slices.Contains(slices.Collect(maps.Values(w.flat)), real) {
			continue // another name still leads there
		}
		delete(w.flatWatched, real)
		inTree := w.dirs[real]
		if !inTree {
			for f := range w.hashes {
				if filepath.Dir(f) == real {
					delete(w.hashes, f)
				}
			}
		}
		if !inTree && w.fsw != nil {
			w.fsw.Remove(real)
		}
	}
	for _, given := range slices.Sorted(maps.Keys(want)) {
		if _, ok := w.flat[given]; !ok {
			w.flat[given] = ""
			w.scanFlat(given, nil, false)
		}
	}
}

// scanFlat watches the flat directory given and records the hashes of
// its files, adding to changed, when it is not nil, every file whose hash
// differs from the one recorded. Symlinks in it are not followed, as in
// the trees; the name given is resolved on every scan, so that a link
// that comes to lead elsewhere is followed there.
func (w *Watcher) scanFlat(given string, changed map[string]bool, quick bool) {
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return // not there (yet); looked for again on every tick
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return
	}
	if old := w.flat[given]; old != "" && old != real {
		delete(w.flatWatched, old)
	}
	w.flat[given] = real
	if !w.flatWatched[real] && w.fsw != nil {
		// Watched before it is read, so that no edit falls in between.
		if err := w.fsw.Add(real); err != nil {
			w.report(err)
			return
		}
	}
	w.flatWatched[real] = true
	entries, err := os.ReadDir(real)
	if err != nil {
		w.report(err)
		return
	}
	for _, e := range entries {
		path := filepath.Join(real, e.Name())
		if e.Type().IsRegular() && !Ignored(path, false) {
			w.rehash(path, changed, quick)
		}
	}
}

// Close stops the watcher.
func (w *Watcher) Close() error {
	select {
	case <-w.done:
		return nil
	default:
	}
	close(w.done)
	var err error
	if w.fsw != nil {
		err = w.fsw.Close()
	}
	w.wg.Wait()
	close(w.batches)
	return err
}

func (w *Watcher) ignored(path string, isDir bool) bool {
	for _, r := range w.roots {
		if path == r {
			return false // a root is watched even if its name looks hidden
		}
	}
	if !isDir && w.flatWatched[filepath.Dir(path)] {
		// The caller named the directory: only the defaults apply.
		return Ignored(path, false)
	}
	return Ignored(path, isDir) || w.opts.Ignore != nil && w.opts.Ignore(w.outside(path), isDir)
}

// outside names a path under a root the way the root was given.
func (w *Watcher) outside(path string) string {
	for i, r := range w.roots {
		if r == w.given[i] {
			continue
		}
		if path == r {
			return w.given[i]
		}
		if rest, ok := strings.CutPrefix(path, r+string(filepath.Separator)); ok {
			return filepath.Join(w.given[i], rest)
		}
	}
	for _, r := range w.roots {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return path // in a tree, named as the tree names it
		}
	}
	for given, real := range w.flat {
		switch {
		case real == "" || real == given:
		case path == real:
			return given
		case filepath.Dir(path) == real:
			return filepath.Join(given, filepath.Base(path))
		}
	}
	return path
}

// outsideAll renames a batch's paths with outside.
func (w *Watcher) outsideAll(b Batch) Batch {
	for i, p := range b.Paths {
		b.Paths[i] = w.outside(p)
	}
	slices.Sort(b.Paths)
	b.Paths = slices.Compact(b.Paths)
	return b
}

// scan walks dir, watches its directories, and records the hashes of its
// files. When changed is not nil, it adds every file whose hash differs
// from the one recorded.
func (w *Watcher) scan(dir string, changed map[string]bool, quick bool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone while we walked; the Remove event follows
			}
			w.report(err)
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if w.ignored(path, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			known := w.dirs[path]
			w.dirs[path] = true
			if !known && w.fsw != nil {
				if err := w.fsw.Add(path); err != nil {
					w.report(err)
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		w.rehash(path, changed, quick)
		return nil
	})
}

// fileState is what the watcher knows of a file: its content hash, and
// the size and modification time that let a poll skip hashing it again.
type fileState struct {
	sum     [32]byte
	size    int64
	modTime time.Time
}

// rehash records path's current state, or its absence, and adds it to
// changed if its content differs from before. With quick set, a file whose
// size and modification time are unchanged is not read again, which keeps
// polling cheap; events always rehash, as a quick edit can keep both.
func (w *Watcher) rehash(path string, changed map[string]bool, quick bool) {
	old, had := w.hashes[path]
	st, ok := readState(path, old, had && quick)
	switch {
	case ok && (!had || old.sum != st.sum):
		w.hashes[path] = st
	case ok:
		w.hashes[path] = st // same content; remember the new stat
		return
	case had:
		delete(w.hashes, path)
	default:
		return
	}
	if changed != nil {
		changed[path] = true
	}
}

func readState(path string, old fileState, quick bool) (fileState, bool) {
	// Only regular files, and opened so that a FIFO cannot block the
	// watcher (os.Open of a FIFO waits for a writer).
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return fileState{}, false
	}
	defer f.Close()
	st := fileState{size: fi.Size(), modTime: fi.ModTime()}
	if quick && st.size == old.size && st.modTime.Equal(old.modTime) {
		st.sum = old.sum
		return st, true
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fileState{}, false
	}
	copy(st.sum[:], h.Sum(nil))
	return st, true
}

func (w *Watcher) loop() {
	defer w.wg.Done()
	dirty := map[string]bool{}
	rescan := false
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	// A root that vanished (the project moved away) is looked for again
	// on every tick, so that watching resumes when it comes back.
	ticker := time.NewTicker(rootRetry)
	defer ticker.Stop()
	var p pending
	for {
		select {
		case <-w.done:
			return
		case p.out(w.batches) <- p.batch:
			p = pending{}
		case req := <-w.setDirs:
			w.applyDirs(req.dirs)
			close(req.done)
		case <-ticker.C:
			p.add(w.outsideAll(w.returned()))
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue // permissions are not content
			}
			dirty[filepath.Clean(ev.Name)] = true
			timer.Reset(w.opts.Debounce)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				rescan = true
				timer.Reset(w.opts.Debounce)
				continue
			}
			w.report(err)
		case <-timer.C:
			var b Batch
			if rescan {
				b = w.rescan(false)
			} else {
				b = w.settle(dirty)
			}
			dirty, rescan = map[string]bool{}, false
			p.add(w.outsideAll(b))
		}
	}
}

// rootRetry is how often a vanished root is looked for.
const rootRetry = 250 * time.Millisecond

// pending is the batch waiting for the reader. While the reader is busy
// (toolc dev building a handler, say), later batches merge into it, so
// that a burst of saves gives one batch after the reader is done, not
// one per save.
type pending struct {
	batch Batch
	set   bool
}

func (p *pending) add(b Batch) {
	if len(b.Paths) == 0 {
		return
	}
	if !p.set {
		p.batch, p.set = b, true
		return
	}
	paths := slices.Concat(p.batch.Paths, b.Paths)
	slices.Sort(paths)
	p.batch = Batch{Paths: slices.Compact(paths), Rescan: p.batch.Rescan || b.Rescan}
}

// out is the channel to send the batch on: nil, which blocks a select's
// case forever, while there is none.
func (p *pending) out(batches chan Batch) chan<- Batch {
	if !p.set {
		return nil
	}
	return batches
}

// returned scans the roots that vanished and have come back, and reports
// their files as changed.
func (w *Watcher) returned() Batch {
	changed := map[string]bool{}
	for _, r := range w.roots {
		if w.dirs[r] {
			continue
		}
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			w.scan(r, changed, false)
		}
	}
	for given, real := range w.flat {
		if real == "" || !w.flatWatched[real] {
			w.scanFlat(given, changed, false)
		}
	}
	return Batch{Paths: sortedKeys(changed)}
}

// settle turns the paths that had events into the files whose content
// changed: new directories are scanned, vanished ones forgotten with
// everything in them, and files rehashed.
func (w *Watcher) settle(dirty map[string]bool) Batch {
	changed := map[string]bool{}
	for path := range dirty {
		fi, err := os.Lstat(path)
		switch {
		case err == nil && fi.IsDir():
			// A directory that appears in a flat directory alone is not
			// watched: only trees are watched below their top.
			if w.inTree(path) && !w.ignored(path, true) {
				// A directory renamed away and back within one debounce
				// has lost its watches while staying on record: forget the
				// subtree's watches so that scan adds them again.
				w.unwatch(path)
				w.scan(path, changed, false)
			}
			// A flat directory deleted and made again within the debounce
			// has lost its watch with the old one.
			for given, real := range w.flat {
				if real == path {
					delete(w.flatWatched, path)
					w.scanFlat(given, changed, false)
				}
			}
		case err == nil:
			if !w.ignored(path, false) && w.under(path) {
				w.rehash(path, changed, false)
			}
		default:
			w.forget(path, changed)
		}
	}
	return Batch{Paths: sortedKeys(changed)}
}

// unwatch forgets that dir and the directories below it are watched,
// keeping the hashes of their files, so that the next scan adds the
// watches again and reports only files whose content changed.
func (w *Watcher) unwatch(dir string) {
	prefix := dir + string(filepath.Separator)
	for d := range w.dirs {
		if d == dir || strings.HasPrefix(d, prefix) {
			delete(w.dirs, d)
		}
	}
}

// under reports whether path is in a watched directory.
func (w *Watcher) under(path string) bool {
	return w.dirs[filepath.Dir(path)] || w.flatWatched[filepath.Dir(path)]
}

// inTree reports whether the directory path is a root or in a directory
// watched as part of a tree.
func (w *Watcher) inTree(path string) bool {
	if slices.Contains(w.roots, path) {
		return true
	}
	return w.dirs[filepath.Dir(path)]
}

// forget drops a path that no longer exists: a file, or a directory and
// everything recorded under it.
func (w *Watcher) forget(path string, changed map[string]bool) {
	if _, ok := w.hashes[path]; ok {
		delete(w.hashes, path)
		changed[path] = true
	}
	prefix := path + string(filepath.Separator)
	for f := range w.hashes {
		if strings.HasPrefix(f, prefix) {
			delete(w.hashes, f)
			changed[f] = true
		}
	}
	for d := range w.dirs {
		if d == path || strings.HasPrefix(d, prefix) {
			delete(w.dirs, d)
			if w.fsw != nil {
				w.fsw.Remove(d) // usually already gone with the directory
			}
		}
	}
	for d := range w.flatWatched {
		if d == path || strings.HasPrefix(d, prefix) {
			delete(w.flatWatched, d) // looked for again on every tick
			if w.fsw != nil {
				w.fsw.Remove(d)
			}
		}
	}
}

// rescan compares the whole tree with what was recorded. quick trusts
// unchanged sizes and modification times, as polling does.
func (w *Watcher) rescan(quick bool) Batch {
	changed := map[string]bool{}
	seen := map[string]bool{}
	for _, r := range w.roots {
		w.scan(r, changed, quick)
	}
	for given := range w.flat {
		w.scanFlat(given, changed, quick)
	}
	for f := range w.hashes {
		seen[f] = true
	}
	for f := range seen {
		if _, err := os.Lstat(f); err != nil {
			w.forget(f, changed)
		}
	}
	for d := range w.dirs {
		if _, err := os.Lstat(d); err != nil {
			delete(w.dirs, d)
		}
	}
	for d := range w.flatWatched {
		if _, err := os.Lstat(d); err != nil {
			delete(w.flatWatched, d)
		}
	}
	return Batch{Paths: sortedKeys(changed), Rescan: true}
}

func (w *Watcher) poll() {
	defer w.wg.Done()
	t := time.NewTicker(w.opts.Poll)
	defer t.Stop()
	var p pending
	for {
		select {
		case <-w.done:
			return
		case p.out(w.batches) <- p.batch:
			p = pending{}
		case req := <-w.setDirs:
			w.applyDirs(req.dirs)
			close(req.done)
		case <-t.C:
			b := w.rescan(true)
			b.Rescan = false
			p.add(w.outsideAll(b))
		}
	}
}

func (w *Watcher) report(err error) {
	select {
	case w.errs <- err:
	default: // nobody is reading errors; dropping one is better than blocking
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
