// Package host builds the handler plugins of a catalog's services and
// starts them, for `toolc serve`, `toolc call` and `toolc dev`.
//
// Each service's handler is a Go main package (the contract directory, or
// the directory its `handler` names). Build compiles it with the go command
// into a cache directory, writing to a temporary name and renaming, so a
// running plugin's binary is never half overwritten; Start launches the
// binaries as go-plugin processes pinned to the checksums Build recorded,
// each under a Plugin, which restarts it when it dies or stops answering.
// BuildFile compiles one reproducibly, for a platform, into a file of the
// caller's: a bundle's (package bundle), whose binaries Start runs pinned
// to the bundle's sums, with no go command. Where the go command is
// missing, building says so (ErrNoGo).
//
// A Source is where a catalog's handlers come from, a bundle's binaries or
// the services' directories; Source.Start builds (if need be) and starts
// them, and Handlers are what a load started, its plugins and the upstream
// servers (package upstream) of the other services, for a drain that may
// come before the load is over.
package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/cutshort"
	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

// Binary is a built handler plugin.
type Binary struct {
	Service string
	// Package is the handler's main package directory.
	Package string
	// Dir is the directory of the service's contract, absolute. Start
	// gives it to the plugin as $TOOLC_SERVICE_DIR, so that a handler has
	// a place of its own that does not depend on the working directory of
	// whoever started toolc (an MCP client may start it in /).
	Dir string
	// Path is the executable in the cache.
	Path string
	// SHA256 is the executable's checksum, which Start pins.
	SHA256 []byte
	// Took is how long the go command ran.
	Took time.Duration
}

// BuildError is a handler that did not compile; Output is what the go
// command printed.
type BuildError struct {
	Service string
	Output  string
	Err     error
}

func (e *BuildError) Error() string {
	msg := fmt.Sprintf("building the handler of service %q: %v", e.Service, e.Err)
	if out := strings.TrimRight(e.Output, "\n"); out != "" {
		msg += "\n" + out
	}
	return msg
}

// CacheDir returns the directory for built handlers: $TOOLC_CACHE, or
// toolc/handlers under the user's cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("TOOLC_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "toolc", "handlers"), nil
}

// HandlerDir returns a service's handler package directory. base is the
// directory that the service's Dir is relative to.
func HandlerDir(base string, svc *catalog.Service) string {
	h := svc.Handler
	if h == "" {
		h = "."
	}
	return filepath.Join(serviceDir(base, svc), filepath.FromSlash(h))
}

// serviceDir is the directory of a service's contract. Its Dir is
// absolute when the contract lies outside the directory it was compiled
// in (toolc serve /abs/path from elsewhere), and filepath.Join would
// make that relative to base: Join(".", "/srv/x") is "srv/x".
func serviceDir(base string, svc *catalog.Service) string {
	dir := filepath.FromSlash(svc.Dir)
	if filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(base, dir)
}

// ErrNoGo is the error of a build on a machine whose PATH has no go
// command: a handler is built from its sources with Go, and only a bundle
// (toolc bundle, toolc serve --bundle) runs without it.
var ErrNoGo = errors.New("no go command on PATH")

// noGo is ErrNoGo with what to do about it, or nil when PATH has a go
// command.
func noGo() error {
	if _, err := exec.LookPath("go"); err == nil {
		return nil
	}
	return fmt.Errorf("%w (PATH is %q): building handlers from their sources needs Go (https://go.dev/dl/); "+
		"to serve without it, make a bundle where Go is (toolc bundle -o DIR) and serve that (toolc serve --bundle DIR)", ErrNoGo, os.Getenv("PATH"))
}

// Target is the platform a handler is built for. The zero value is the go
// command's default, the machine it runs on.
type Target struct {
	GOOS, GOARCH string
}

// Build compiles a service's handler into cacheDir.
func Build(ctx context.Context, cacheDir, base string, svc *catalog.Service) (*Binary, error) {
	pkg, err := mainPackage(base, svc)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(pkg))
	name := fmt.Sprintf("%s-%s", svc.Name, hex.EncodeToString(sum[:6]))
	final := filepath.Join(cacheDir, name)
	tmp, err := os.CreateTemp(cacheDir, "."+name+".tmp*")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename

	start := time.Now()
	if err := goBuild(ctx, svc.Name, pkg, tmp.Name(), nil); err != nil {
		return nil, err
	}
	took := time.Since(start)
	bin, err := fileSum(tmp.Name())
	if err != nil {
		return nil, err
	}
	// The name carries the binary's own hash: a rebuild never overwrites
	// a binary that a running plugin may restart from, pinned to its
	// checksum. toolc dev removes a binary once its plugin is retired.
	final = fmt.Sprintf("%s-%s", final, hex.EncodeToString(bin[:4]))
	if err := os.Rename(tmp.Name(), final); err != nil {
		return nil, err
	}
	removeStale(cacheDir, name+"-", final)
	dir, err := filepath.Abs(serviceDir(base, svc))
	if err != nil {
		return nil, err
	}
	return &Binary{Service: svc.Name, Package: pkg, Dir: dir, Path: final, SHA256: bin, Took: took}, nil
}

// BuildFile compiles a service's handler into the file out, for target,
// reproducibly: the same sources and go command give the same bytes,
// wherever the sources and out are (-trimpath, no build ID, no VCS
// stamp, and cgo off unless $CGO_ENABLED says otherwise, so that the
// binary needs no C library either). toolc bundle builds with it.
func BuildFile(ctx context.Context, base string, svc *catalog.Service, out string, target Target) (*Binary, error) {
	pkg, err := mainPackage(base, svc)
	if err != nil {
		return nil, err
	}
	var env []string
	if target.GOOS != "" {
		env = append(env, "GOOS="+target.GOOS)
	}
	if target.GOARCH != "" {
		env = append(env, "GOARCH="+target.GOARCH)
	}
	if os.Getenv("CGO_ENABLED") == "" {
		env = append(env, "CGO_ENABLED=0")
	}
	start := time.Now()
	if err := goBuild(ctx, svc.Name, pkg, out, env, "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid="); err != nil {
		return nil, err
	}
	took := time.Since(start)
	sum, err := fileSum(out)
	if err != nil {
		return nil, err
	}
	return &Binary{Service: svc.Name, Package: pkg, Path: out, SHA256: sum, Took: took}, nil
}

// mainPackage is the absolute directory of a service's handler package,
// which must hold a Go main package.
func mainPackage(base string, svc *catalog.Service) (string, error) {
	pkg, err := filepath.Abs(HandlerDir(base, svc))
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(pkg); err != nil || !fi.IsDir() {
		return "", &BuildError{Service: svc.Name, Err: fmt.Errorf("handler package %s does not exist", pkg)}
	}
	// go build of a package other than main writes no program (toolc
	// used to fail on exec with "permission denied"): say what is wrong,
	// as toolc check's handler rule does.
	ctxt := build.Default
	ctxt.OpenFile = inputfile.GoBuildOpen // never blocks on a FIFO named x.go
	if p, err := ctxt.ImportDir(pkg, 0); err == nil && p.Name != "main" {
		return "", &BuildError{Service: svc.Name, Err: fmt.Errorf("%s holds Go package %s, not a main package: a handler must be package main, with a main that calls Serve; make it one, or point the contract's handler: at one", pkg, p.Name)}
	}
	return pkg, nil
}

// goBuild runs go build in pkg, writing the program to out, with env
// added to toolc's environment and flags before -o.
func goBuild(ctx context.Context, service, pkg, out string, env []string, flags ...string) error {
	if err := noGo(); err != nil {
		return &BuildError{Service: service, Err: err}
	}
	// The go command runs in pkg: a relative out would land there.
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	args := append(append([]string{"build"}, flags...), "-o", out, ".")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = pkg
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		// Killed because ctx ended, the build says only "signal: killed":
		// the error also wraps ctx.Err(), so that serve.Run can tell a
		// build cut short from one that failed.
		return cutshort.Mark(ctx, &BuildError{Service: service, Output: buf.String(), Err: err})
	}
	return nil
}

// fileSum is the sha256 of the file at path.
func fileSum(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// Options configure how plugins start.
type Options struct {
	// StartTimeout bounds a plugin's start. Default 10s.
	StartTimeout time.Duration
	// Stderr receives the plugins' standard error, each line prefixed with
	// its service's name. Default os.Stderr.
	Stderr io.Writer
	// AutoMTLS encrypts and authenticates the connection to each plugin.
	AutoMTLS bool
	// HealthInterval and HealthTimeout configure the check that restarts a
	// plugin that stopped answering (see rpc.ClientConfig).
	HealthInterval, HealthTimeout time.Duration
	Logger                        *slog.Logger
}

// Start starts the plugin of each binary. On error it stops the ones it
// started.
func Start(ctx context.Context, bins []*Binary, opts Options) (map[string]*Plugin, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 10 * time.Second
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	started := map[string]*Plugin{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for _, b := range bins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := StartPlugin(ctx, ClientConfig(b, opts), opts.Logger)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("starting the handler of service %q: %w", b.Service, err))
				return
			}
			started[b.Service] = p
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		Stop(started, 0)
		return nil, errors.Join(errs...)
	}
	return started, nil
}

// ServiceDirEnv is the environment variable in which a plugin finds the
// directory of its service's contract (Binary.Dir).
const ServiceDirEnv = "TOOLC_SERVICE_DIR"

// PluginEnvVar names the environment variable that lists the variables of
// toolc's environment that its plugins get, beyond the few every plugin
// gets (PATH, HOME, the locale, proxies, the Go runtime's and
// OpenTelemetry's: see rpc.ClientConfig.PassEnv): names, or prefixes
// ending in "*", separated by commas or spaces, as in
// TOOLC_PLUGIN_ENV=WEATHER_API_KEY,PG*. Nothing else of toolc's
// environment reaches a plugin, and $TOOLC_TOKEN and $TOOLC_STATE_KEY
// never do.
const PluginEnvVar = "TOOLC_PLUGIN_ENV"

// passEnv returns the names that $TOOLC_PLUGIN_ENV lists.
func passEnv() []string {
	return strings.FieldsFunc(os.Getenv(PluginEnvVar), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// ClientConfig is the go-plugin configuration for a built binary.
func ClientConfig(b *Binary, opts Options) rpc.ClientConfig {
	var env []string
	if b.Dir != "" {
		env = append(env, ServiceDirEnv+"="+b.Dir)
	}
	if os.Getenv("OTEL_SERVICE_NAME") == "" {
		// The plugin's spans, when it exports them, are its service's
		// (toolc's own are "toolc"), not its binary's, whose name in the
		// cache carries hashes.
		env = append(env, "OTEL_SERVICE_NAME="+b.Service)
	}
	return rpc.ClientConfig{
		Service:      b.Service,
		Path:         b.Path,
		PassEnv:      passEnv(),
		Env:          env,
		StartTimeout: opts.StartTimeout,
		Stderr:       opts.Stderr,
		Checksum:     b.SHA256,
		AutoMTLS:     opts.AutoMTLS,

		HealthInterval: opts.HealthInterval,
		HealthTimeout:  opts.HealthTimeout,
	}
}

// Stop stops plugins, giving calls in flight up to grace to finish.
func Stop(ps map[string]*Plugin, grace time.Duration) {
	StopBecause(ps, grace, "its handler was stopped")
}

// StopBecause is Stop, with the reason that a call still running after
// grace is given (see Plugin.Stop).
func StopBecause(ps map[string]*Plugin, grace time.Duration, reason string) {
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop(grace, reason) }()
	}
	wg.Wait()
}

// Dispatchers converts started plugins for runtime.Swap.
func Dispatchers(ps map[string]*Plugin) map[string]runtime.Dispatcher {
	out := make(map[string]runtime.Dispatcher, len(ps))
	for name, p := range ps {
		out[name] = p
	}
	return out
}

// BuildAll builds the handler of every service of the catalog, two at a
// time (the go command parallelises each build itself). It reports every
// failed build, not only the first.
func BuildAll(ctx context.Context, cacheDir, base string, cat *catalog.Catalog) ([]*Binary, error) {
	if len(cat.Services) > 0 {
		// Said once, not once per service.
		if err := noGo(); err != nil {
			return nil, err
		}
	}
	bins := make([]*Binary, len(cat.Services))
	errs := make([]error, len(cat.Services))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, svc := range cat.Services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			bins[i], errs[i] = Build(ctx, cacheDir, base, svc)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return bins, nil
}

// removeStale deletes earlier builds of the same handler that nothing has
// touched for a day, so that the cache does not grow without bound.
func removeStale(dir, prefix, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if !strings.HasPrefix(e.Name(), prefix) || path == keep {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.Remove(path)
		}
	}
}
