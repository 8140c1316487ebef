package bench_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolc/toolc/bench/corpus"
	"github.com/toolc/toolc/compiler"
)

// sizes are the corpus sizes, in tools, of every benchmark. Each corpus has
// services of corpus.DefaultToolsPerService tools.
var sizes = []int{100, 500, 2000}

var (
	// root holds the corpora and the toolc binary of one `go test` run,
	// shared by all benchmarks so that they measure the same files.
	root string

	corporaMu sync.Mutex
	corpora   = map[int]string{}

	toolcOnce sync.Once
	toolcPath string
	toolcErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolc-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	root = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// corpusDir returns the corpus of n tools, writing it on first use. The
// benchmarks call it before their timed loop.
func corpusDir(b *testing.B, n int) string {
	b.Helper()
	corporaMu.Lock()
	defer corporaMu.Unlock()
	if dir, ok := corpora[n]; ok {
		return dir
	}
	dir := filepath.Join(root, fmt.Sprintf("corpus-%d", n))
	if _, err := corpus.Write(dir, corpus.ForTools(n)); err != nil {
		b.Fatal(err)
	}
	corpora[n] = dir
	return dir
}

// toolcBinary builds cmd/toolc once per run.
func toolcBinary(b *testing.B) string {
	b.Helper()
	toolcOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		toolcPath = filepath.Join(root, "bin", "toolc")
		if runtime.GOOS == "windows" {
			toolcPath += ".exe"
		}
		out, err := exec.Command(goTool, "build", "-o", toolcPath, "github.com/toolc/toolc/cmd/toolc").CombinedOutput()
		if err != nil {
			toolcErr = fmt.Errorf("go build ./cmd/toolc: %v\n%s", err, out)
		}
	})
	if toolcErr != nil {
		b.Fatal(toolcErr)
	}
	return toolcPath
}

// BenchmarkCheck times compiler.Compile, the whole of `toolc check` but
// argument parsing and printing, in process.
func BenchmarkCheck(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			dir := corpusDir(b, n)
			var res *compiler.Result
			for b.Loop() {
				var err error
				res, err = compiler.Compile(compiler.Config{Dir: dir}, "./...")
				if err != nil {
					b.Fatal(err)
				}
			}
			if res.HasErrors() {
				b.Fatalf("the corpus of %d tools has errors: first %s", n, res.Diagnostics[0])
			}
			tools := 0
			for _, s := range res.Catalog.Services {
				tools += len(s.Tools)
			}
			if tools != n {
				b.Fatalf("compiled %d tools, want %d", tools, n)
			}
			reportWall(b, n)
		})
	}
}

// BenchmarkToolcCheckCLI times `toolc check ./...` as a user runs it: a
// process, output included.
func BenchmarkToolcCheckCLI(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			dir := corpusDir(b, n)
			out := runProcess(b, dir, toolcBinary(b), "check", "./...")
			if want := fmt.Sprintf("%d tools: 0 errors", n); !strings.Contains(out, want) {
				b.Fatalf("toolc check did not report %q:\n%s", want, tail(out, 2000))
			}
		})
	}
}

// BenchmarkCueVet times `cue vet -c ./...` on the same corpus, against the
// strict schema vendored in the corpus's cue.mod/pkg.
func BenchmarkCueVet(b *testing.B) {
	cue, err := exec.LookPath("cue")
	if err != nil {
		b.Skip("cue not on PATH: go install cuelang.org/go/cmd/cue@v0.17.1")
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			runProcess(b, corpusDir(b, n), cue, "vet", "-c", "./...")
		})
	}
}

// runProcess runs a command in dir once per iteration and fails if it
// fails. Besides wall time it reports the CPU time (user and system) of
// the process, which shows how much of the wall time is parallel.
func runProcess(b *testing.B, dir, name string, args ...string) string {
	b.Helper()
	var out bytes.Buffer
	var cpu time.Duration
	for b.Loop() {
		out.Reset()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Stdout = &out
		cmd.Stderr = &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, tail(out.String(), 4000))
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	reportWall(b, sizeOf(b))
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	return out.String()
}

// sizeOf returns the number of tools in a benchmark named .../tools=N.
func sizeOf(b *testing.B) int {
	var n int
	_, after, _ := strings.Cut(b.Name(), "tools=")
	fmt.Sscanf(after, "%d", &n)
	return n
}

// reportWall reports wall milliseconds per run, which reads more easily
// than ns/op at these sizes, and the corpus size.
func reportWall(b *testing.B, tools int) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
	b.ReportMetric(float64(tools), "tools")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
