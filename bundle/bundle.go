// Package bundle writes and reads toolc bundles: a directory that holds a
// compiled catalog, each of its services' handlers built for one platform,
// a manifest, and the sha256 sums of all three, so that `toolc serve
// --bundle DIR` runs with no go command, no sources and no network.
//
//	m, err := bundle.Write(ctx, cat, bundle.Options{Dir: "dist/weather"}) // toolc bundle
//	b, err := bundle.Load("dist/weather")                                   // toolc serve --bundle
//	ps, err := host.Start(ctx, b.Binaries, host.Options{})
//
// A bundle's layout:
//
//	manifest.json       format, goos, goarch, the toolc that wrote it, each service's handler
//	catalog.json        the catalog, as toolc build writes it
//	handlers/SERVICE    each service's handler, built by host.BuildFile
//	content/SERVICE/... the files beside each contract that its prompts, resources
//	                    and skills serve; the catalog's service directory is content/SERVICE
//	SHA256SUMS          the sha256 of every other file, as sha256sum writes them
//
// Writing the same sources with the same toolc and go command gives the
// same bytes (see host.BuildFile). Load checks every sum before it returns
// anything, and the host checks each handler's again on the file it runs.
package bundle

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/contentfile"
	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/jsonfile"
	"github.com/toolc/toolc/internal/skilldir"
)

// Format is the manifest's format: the layout of the bundle.
const Format = "toolc.bundle/v1"

// The files of a bundle.
const (
	ManifestFile = "manifest.json"
	CatalogFile  = "catalog.json"
	SumsFile     = "SHA256SUMS"
	handlersDir  = "handlers"
	contentDir   = "content"
)

// Manifest describes a bundle.
type Manifest struct {
	Format string `json:"format"`
	// GOOS and GOARCH are the platform the handlers were built for, the
	// one a bundle runs on.
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	// Toolc is the toolc that wrote the bundle, as toolc version prints
	// it.
	Toolc string `json:"toolc"`
	// Catalog is the catalog file, relative to the bundle.
	Catalog  string    `json:"catalog"`
	Services []Service `json:"services"`
}

// Service is one service of a bundle.
type Service struct {
	Name string `json:"name"`
	// Handler is its handler binary, slash-separated and relative to the
	// bundle.
	Handler string `json:"handler"`
}

// Platform is "goos/goarch".
func (m *Manifest) Platform() string { return m.GOOS + "/" + m.GOARCH }

// Options configure Write.
type Options struct {
	// Dir is the bundle directory to write. It must not exist, be empty,
	// or hold a bundle, which Write replaces.
	Dir string
	// Target is the platform to build the handlers for; the zero value is
	// the one toolc runs on.
	Target host.Target
	// Base is the directory that the catalog's service directories are
	// relative to. Default ".".
	Base string
	// Toolc is what the manifest records as the toolc that wrote it.
	Toolc string
}

// Written is what Write wrote.
type Written struct {
	Manifest *Manifest
	// Took is how long the handler builds took, together.
	Took time.Duration
}

// CheckDir returns an error if Write would refuse to replace dir: a file,
// or a directory that holds something other than a bundle. toolc bundle
// asks before it compiles anything.
func CheckDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory: not replacing it with a bundle", dir)
		}
		return err
	case len(entries) == 0:
		return nil
	}
	data, err := inputfile.ReadFile(filepath.Join(dir, ManifestFile))
	if err == nil {
		if format, _, ferr := jsonfile.Format(data); ferr == nil && strings.HasPrefix(format, "toolc.bundle/") {
			return nil
		}
	}
	return fmt.Errorf("%s exists and holds no toolc bundle: not replacing it (give -o a new or empty directory, or one that holds a bundle)", dir)
}

// Write builds every service's handler for opts.Target and writes the
// bundle of cat to opts.Dir. It writes the bundle into a temporary
// directory beside opts.Dir and renames it into place, so that a failed
// or interrupted Write leaves opts.Dir as it was.
func Write(ctx context.Context, cat *catalog.Catalog, opts Options) (*Written, error) {
	if err := CheckUpstreams(cat); err != nil {
		return nil, err
	}
	if err := CheckDir(opts.Dir); err != nil {
		return nil, err
	}
	target := opts.Target
	if target.GOOS == "" {
		target.GOOS = goruntime.GOOS
	}
	if target.GOARCH == "" {
		target.GOARCH = goruntime.GOARCH
	}
	base := opts.Base
	if base == "" {
		base = "."
	}
	dir := filepath.Clean(opts.Dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // fails harmlessly after the rename
	if err := os.Mkdir(filepath.Join(tmp, handlersDir), 0o755); err != nil {
		return nil, err
	}

	m := &Manifest{Format: Format, GOOS: target.GOOS, GOARCH: target.GOARCH, Toolc: opts.Toolc, Catalog: CatalogFile, Services: []Service{}}
	sums := map[string][]byte{}
	start := time.Now()
	// Two builds at a time, as host.BuildAll runs them (the go command
	// parallelises each build itself); every failure is reported, in the
	// catalog's order.
	bins := make([]*host.Binary, len(cat.Services))
	errs := make([]error, len(cat.Services))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, svc := range cat.Services {
		m.Services = append(m.Services, Service{Name: svc.Name, Handler: handlerPath(svc.Name, target)})
	}
	for i, svc := range cat.Services {
		out := filepath.Join(tmp, filepath.FromSlash(m.Services[i].Handler))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			bins[i], errs[i] = host.BuildFile(ctx, base, svc, out, target)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, host.ErrNoGo) {
			return nil, err // said once, not once per service
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, b := range bins {
		sums[m.Services[i].Handler] = b.SHA256
	}
	took := time.Since(start)

	data, err := cat.Marshal()
	if err != nil {
		return nil, err
	}
	if data, err = writeContent(tmp, base, data, sums); err != nil {
		return nil, err
	}
	if err := writeFile(tmp, CatalogFile, data, sums); err != nil {
		return nil, err
	}
	data, err = json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFile(tmp, ManifestFile, append(data, '\n'), sums); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, SumsFile), formatSums(sums), 0o644); err != nil {
		return nil, err
	}
	// MkdirTemp made it 0700; a bundle is read by whoever serves it.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := replace(tmp, dir); err != nil {
		return nil, err
	}
	return &Written{Manifest: m, Took: took}, nil
}

// writeContent copies into the bundle the files beside each contract that
// its prompts, resources and skills serve (read as the server reads them,
// through contentfile and skilldir), under content/SERVICE, and returns
// the catalog with each such service's directory there: a server of the
// bundle reads them relative to the bundle (ContentDir), with no sources.
// A service's directory is not part of its fingerprint, so the catalog's
// fingerprints are those of the sources.
func writeContent(tmp, base string, catData []byte, sums map[string][]byte) ([]byte, error) {
	cat, err := catalog.Parse(catData)
	if err != nil {
		return nil, err
	}
	moved := false
	for _, svc := range cat.Services {
		names, err := contentFiles(base, svc)
		if err != nil {
			return nil, fmt.Errorf("service %q: %v", svc.Name, err)
		}
		if len(names) == 0 {
			continue
		}
		src := filepath.Join(base, filepath.FromSlash(svc.Dir))
		for _, name := range names {
			data, err := contentfile.Read(src, name)
			if err != nil {
				return nil, fmt.Errorf("service %q: %v", svc.Name, err)
			}
			rel := path.Join(contentDir, svc.Name, name)
			if err := os.MkdirAll(filepath.Join(tmp, filepath.Dir(filepath.FromSlash(rel))), 0o755); err != nil {
				return nil, err
			}
			if err := writeFile(tmp, rel, data, sums); err != nil {
				return nil, err
			}
		}
		svc.Dir = path.Join(contentDir, svc.Name)
		moved = true
	}
	if !moved {
		return catData, nil
	}
	return cat.Marshal()
}

// contentFiles are the files, relative to svc's directory, that its
// prompts, resources and skills serve, each once.
func contentFiles(base string, svc *catalog.Service) ([]string, error) {
	var names []string
	add := func(name string) {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, r := range svc.Resources {
		add(r.File)
	}
	for _, p := range svc.Prompts {
		for _, m := range p.Messages {
			add(m.File)
		}
	}
	for _, sk := range svc.Skills {
		read, err := skilldir.Read(filepath.Join(base, filepath.FromSlash(svc.Dir)), sk.Dir)
		if err != nil {
			return nil, fmt.Errorf("skill %s: %v", sk.Name, err)
		}
		for _, f := range read.Files {
			add(path.Join(sk.Dir, f.Path))
		}
	}
	return names, nil
}

// handlerPath is where a bundle for target holds a service's handler.
func handlerPath(service string, target host.Target) string {
	if target.GOOS == "windows" {
		return handlersDir + "/" + service + ".exe"
	}
	return handlersDir + "/" + service
}

func writeFile(dir, name string, data []byte, sums map[string][]byte) error {
	sum := sha256.Sum256(data)
	sums[name] = sum[:]
	return os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// formatSums writes sums as sha256sum does, sorted by name, so that
// `sha256sum -c SHA256SUMS` in the bundle checks them.
func formatSums(sums map[string][]byte) []byte {
	names := make([]string, 0, len(sums))
	for name := range sums {
		names = append(names, name)
	}
	slices.Sort(names)
	var b bytes.Buffer
	for _, name := range names {
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sums[name]), name)
	}
	return b.Bytes()
}

// A Bundle is a bundle that Load has checked.
type Bundle struct {
	Dir      string
	Manifest *Manifest
	Catalog  *catalog.Catalog
	// Binaries are the handlers, each pinned to its sum, for host.Start.
	Binaries []*host.Binary
}

// PlatformError is a bundle built for another platform than the one
// toolc runs on.
type PlatformError struct {
	Dir        string
	Built, Run string // goos/goarch
}

func (e *PlatformError) Error() string {
	goos, goarch, _ := strings.Cut(e.Run, "/")
	return fmt.Sprintf("bundle %s was built for %s, and this toolc runs on %s, where its handlers cannot run: "+
		"serve it with a toolc on %s, or make a bundle for this platform (toolc bundle -o DIR --goos %s --goarch %s)",
		e.Dir, e.Built, e.Run, e.Built, goos, goarch)
}

// Load reads the bundle in dir and checks it: the format, the platform
// (it must be the one toolc runs on), and the sha256 of every file that
// SHA256SUMS lists, which must list the manifest, the catalog and every
// handler. Its binaries are pinned to those sums.
func Load(dir string) (*Bundle, error) {
	b, err := load(dir)
	if err != nil {
		var pe *PlatformError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	return b, nil
}

func load(dir string) (*Bundle, error) {
	data, err := inputfile.ReadFile(filepath.Join(dir, SumsFile))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, serr
		}
		return nil, fmt.Errorf("no %s: not a toolc bundle (toolc bundle -o DIR writes one)", SumsFile)
	} else if err != nil {
		return nil, err
	}
	sums, err := parseSums(data)
	if err != nil {
		return nil, err
	}
	manifest, err := readChecked(dir, ManifestFile, sums)
	if err != nil {
		return nil, err
	}
	m, err := parseManifest(manifest)
	if err != nil {
		return nil, err
	}
	if run := goruntime.GOOS + "/" + goruntime.GOARCH; m.Platform() != run {
		return nil, &PlatformError{Dir: dir, Built: m.Platform(), Run: run}
	}
	data, err = readChecked(dir, m.Catalog, sums)
	if err != nil {
		return nil, err
	}
	cat, err := catalog.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Catalog, err)
	}
	handlers := map[string]string{}
	for _, s := range m.Services {
		handlers[s.Name] = s.Handler
	}
	b := &Bundle{Dir: dir, Manifest: m, Catalog: cat}
	for _, svc := range cat.Services {
		rel, ok := handlers[svc.Name]
		if !ok {
			return nil, fmt.Errorf("%s names no handler for service %q of its catalog", ManifestFile, svc.Name)
		}
		delete(handlers, svc.Name)
		sum, err := checkFile(dir, rel, sums)
		if err != nil {
			return nil, err
		}
		p, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		b.Binaries = append(b.Binaries, &host.Binary{Service: svc.Name, Path: p, SHA256: sum})
	}
	for name := range handlers {
		return nil, fmt.Errorf("%s names a handler for service %q, which its catalog does not have", ManifestFile, name)
	}
	// The content files, which the server reads when it serves them.
	for name := range sums {
		if strings.HasPrefix(name, contentDir+"/") {
			if _, err := checkFile(dir, name, sums); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// parseSums reads a SHA256SUMS file: "HEX  NAME" lines (or "HEX *NAME",
// sha256sum's binary mode), each name a clean relative path within the
// bundle, listed once.
func parseSums(data []byte) (map[string][]byte, error) {
	sums := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		hexSum, name, ok := strings.Cut(line, " ")
		sum, err := hex.DecodeString(hexSum)
		if name = strings.TrimPrefix(name, " "); len(name) > 0 && name[0] == '*' {
			name = name[1:]
		}
		if !ok || err != nil || len(sum) != sha256.Size || name == "" {
			return nil, fmt.Errorf("%s:%d: not a sha256sum line (HEX  NAME): %q", SumsFile, n, line)
		}
		if !fs.ValidPath(name) {
			return nil, fmt.Errorf("%s:%d: %q is not a path inside the bundle", SumsFile, n, name)
		}
		if _, dup := sums[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", SumsFile, n, name)
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}

func parseManifest(data []byte) (*Manifest, error) {
	format, has, err := jsonfile.Format(data)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %v", ManifestFile, err)
	case !has:
		return nil, fmt.Errorf(`%s: no "format" key: not a toolc bundle`, ManifestFile)
	case format != Format:
		return nil, fmt.Errorf("%s: format %q is not %q, the one this toolc reads: make the bundle again with this toolc (toolc bundle)", ManifestFile, format, Format)
	}
	var m Manifest
	if err := jsonfile.Strict(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", ManifestFile, err)
	}
	if m.GOOS == "" || m.GOARCH == "" {
		return nil, fmt.Errorf("%s: no goos or goarch", ManifestFile)
	}
	if !fs.ValidPath(m.Catalog) {
		return nil, fmt.Errorf("%s: catalog %q is not a path inside the bundle", ManifestFile, m.Catalog)
	}
	for _, s := range m.Services {
		if !fs.ValidPath(s.Handler) || path.Dir(s.Handler) != handlersDir {
			return nil, fmt.Errorf("%s: the handler %q of service %q is not a file in %s/", ManifestFile, s.Handler, s.Name, handlersDir)
		}
	}
	return &m, nil
}

// readChecked reads the bundle's file name, which must match its sum.
func readChecked(dir, name string, sums map[string][]byte) ([]byte, error) {
	want, ok := sums[name]
	if !ok {
		return nil, fmt.Errorf("%s does not list %s", SumsFile, name)
	}
	data, err := inputfile.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	if got := sha256.Sum256(data); !bytes.Equal(got[:], want) {
		return nil, mismatch(name, got[:], want)
	}
	return data, nil
}

// checkFile checks the sum of the bundle's file name, a handler too large
// to read into memory, and returns it.
func checkFile(dir, name string, sums map[string][]byte) ([]byte, error) {
	want, ok := sums[name]
	if !ok {
		return nil, fmt.Errorf("%s does not list %s", SumsFile, name)
	}
	f, _, err := inputfile.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return nil, mismatch(name, got, want)
	}
	return want, nil
}

func mismatch(name string, got, want []byte) error {
	return fmt.Errorf("%s has sha256 %s, but %s says %s: the bundle was changed or damaged after toolc bundle wrote it; make it again",
		name, hex.EncodeToString(got), SumsFile, hex.EncodeToString(want))
}

// OfCatalog reports whether file is the catalog of a bundle, as the
// manifest beside it says, and returns the bundle's directory: toolc serve
// --catalog DIR/catalog.json serves that bundle, prebuilt handlers and all,
// rather than build handlers from sources that are not there.
func OfCatalog(file string) (dir string, ok bool) {
	dir = filepath.Dir(file)
	data, err := inputfile.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return "", false
	}
	var m struct {
		Format  string `json:"format"`
		Catalog string `json:"catalog"`
	}
	if json.Unmarshal(data, &m) != nil || !strings.HasPrefix(m.Format, "toolc.bundle/") || m.Catalog != filepath.Base(file) {
		return "", false
	}
	return dir, true
}

// UpstreamError refuses a catalog with services that an upstream MCP
// server serves: a bundle carries Go handlers built for a platform, and an
// upstream's command, the files it reads and the programs it starts
// (npx, a Python environment) are its machine's, not a build's.
type UpstreamError struct {
	Services []*catalog.Service
}

func (e *UpstreamError) Error() string {
	var b strings.Builder
	for i, svc := range e.Services {
		if i > 0 {
			b.WriteString("\n")
		}
		what := "its url " + svc.Upstream.URL
		if len(svc.Upstream.Command) > 0 {
			what = "its command " + svc.Upstream.Command[0]
		}
		if pos, _ := svc.Pos.MarshalText(); len(pos) > 0 {
			b.Write(pos)
			b.WriteString(": ")
		}
		fmt.Fprintf(&b, "service %q is served by an upstream MCP server (%s), which a bundle cannot carry: a bundle holds Go handlers built for a platform; bundle the other services, and serve this contract with toolc serve where its server runs", svc.Name, what)
	}
	return b.String()
}

// CheckUpstreams returns an *UpstreamError when a service of cat has an
// upstream, before anything is built or written.
func CheckUpstreams(cat *catalog.Catalog) error {
	var ups []*catalog.Service
	for _, svc := range cat.Services {
		if svc.Upstream != nil {
			ups = append(ups, svc)
		}
	}
	if len(ups) > 0 {
		return &UpstreamError{Services: ups}
	}
	return nil
}
