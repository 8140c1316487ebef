package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/bench/serving/weather"
)

// bins holds the binaries TestMain builds: toolc, mcppeer, the floor's
// plugin, and the catalog of the weather contract.
var bins struct {
	dir, root, toolc, peer, floorPlugin, catalog string
	// baseToolc is toolc built from $TOOLC_SERVING_BASELINE, a checkout
	// of another commit, for a before and after in one run; "" without.
	baseToolc string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "serving")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bins.dir = dir
	_, file, _, _ := goruntime.Caller(0)
	bins.root = filepath.Join(filepath.Dir(file), "..", "..")
	bins.toolc = filepath.Join(dir, "toolc")
	bins.peer = filepath.Join(dir, "mcppeer")
	bins.floorPlugin = filepath.Join(dir, "floorplugin")
	bins.catalog = filepath.Join(dir, "weather.catalog.json")
	builds := [][]string{
		{"go", "build", "-o", bins.toolc, "./cmd/toolc"},
		{"go", "build", "-o", bins.peer, "./bench/cmd/mcppeer"},
		{"go", "build", "-o", bins.floorPlugin, "./bench/cmd/floorplugin"},
		{bins.toolc, "build", "-o", bins.catalog, "./bench/serving/testdata/weather"},
	}
	if base := os.Getenv("TOOLC_SERVING_BASELINE"); base != "" {
		bins.baseToolc = filepath.Join(dir, "toolc-base")
		builds = append(builds, []string{"go", "-C", base, "build", "-o", bins.baseToolc, "./cmd/toolc"})
	}
	for _, c := range builds {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Dir = bins.root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n%s", strings.Join(c, " "), err, out)
			return 1
		}
	}
	return m.Run()
}

// server is a server of the comparison: its name in the table, and its
// command for HTTP and for stdio.
type server struct {
	name        string
	http, stdio []string
}

func servers() []server {
	peer := func(name string, more ...string) server {
		return server{
			name:  name,
			http:  append([]string{bins.peer, "-server", name, "-http", "127.0.0.1:0"}, more...),
			stdio: append([]string{bins.peer, "-server", name, "-stdio"}, more...),
		}
	}
	local := peer("toolc", "-catalog", bins.catalog)
	local.name = "toolc-inprocess"
	// The floor with its tool in a go-plugin process, no toolc on either
	// side: the least that a server with a plugin hop can do, and so the
	// floor under toolc-serve.
	floorPlugin := peer("floor", "-plugin", bins.floorPlugin)
	floorPlugin.name = "floor-plugin"
	var base []server
	if bins.baseToolc != "" {
		// The baseline's host serves this tree's contract, with the
		// plugin this tree's SDK builds; the two agree on the older
		// host's protocol version.
		base = append(base, server{
			name:  "toolc-serve-base",
			http:  []string{bins.baseToolc, "serve", "--http", "127.0.0.1:0", "./bench/serving/testdata/weather"},
			stdio: []string{bins.baseToolc, "serve", "--stdio", "./bench/serving/testdata/weather"},
		})
	}
	return append([]server{
		peer("floor"),
		floorPlugin,
		peer("mcpgo"),
		peer("gosdk"),
		local,
		{
			name:  "toolc-serve",
			http:  []string{bins.toolc, "serve", "--http", "127.0.0.1:0", "./bench/serving/testdata/weather"},
			stdio: []string{bins.toolc, "serve", "--stdio", "./bench/serving/testdata/weather"},
		},
	}, base...)
}

// settings are the comparison's rounds: TOOLC_SERVING=1 for the long one,
// with TOOLC_SERVING_ROUNDS, _SECONDS and _CLIENTS to change it, and
// TOOLC_SERVING_BASELINE=DIR to add `toolc serve` as built from the
// checkout DIR (git worktree add --detach DIR COMMIT).
func settings(t *testing.T) (rounds int, d time.Duration, clients []int, long bool) {
	if os.Getenv("TOOLC_SERVING") == "" {
		return 1, 150 * time.Millisecond, []int{1, 8}, false
	}
	rounds, d, clients = 8, 3*time.Second, []int{1, 8, 64}
	if v, err := strconv.Atoi(os.Getenv("TOOLC_SERVING_ROUNDS")); err == nil {
		rounds = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("TOOLC_SERVING_SECONDS"), 64); err == nil {
		d = time.Duration(v * float64(time.Second))
	}
	if v := os.Getenv("TOOLC_SERVING_CLIENTS"); v != "" {
		clients = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("TOOLC_SERVING_CLIENTS: %v", err)
			}
			clients = append(clients, n)
		}
	}
	return rounds, d, clients, true
}

// TestServing runs the comparison: every server at both revisions over
// HTTP, and over stdio, in rotating rounds. Every call of every server
// must be answered with the forecast. The short version, in every go
// test, shows that the harness and each server work; TOOLC_SERVING=1
// prints the table of BENCHMARKS.md.
func TestServing(t *testing.T) {
	rounds, d, clientCounts, long := settings(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+time.Duration(rounds)*d*60)
	defer cancel()
	specs := servers()
	running := make([]*Server, len(specs))
	for i, sp := range specs {
		sctx, scancel := context.WithTimeout(ctx, 3*time.Minute) // toolc serve builds its plugin
		s, err := StartHTTP(sctx, sp.name, sp.http, bins.root)
		scancel()
		if err != nil {
			t.Fatal(err)
		}
		running[i] = s
		defer s.Stop()
	}
	type cell struct {
		clients int
		rev     string
	}
	results := map[cell][][]Sample{} // cell → round → server
	for r := range rounds {
		for _, clients := range clientCounts {
			for _, rev := range Revisions {
				row := make([]Sample, len(running))
				for k := range running {
					i := (k + r) % len(running) // the first server rotates
					s, err := RunHTTP(ctx, running[i], rev, clients, d)
					if err != nil {
						t.Fatal(err)
					}
					if s.Errors > 0 {
						t.Errorf("%s, %d clients, %s: %d of %d calls failed, the first: %v", running[i].Name, clients, rev, s.Errors, s.Errors+s.Calls, s.FirstError)
					}
					if s.Calls == 0 {
						t.Errorf("%s, %d clients, %s: no call answered", running[i].Name, clients, rev)
					}
					row[i] = s
				}
				c := cell{clients, rev}
				results[c] = append(results[c], row)
			}
		}
	}
	for _, s := range running {
		s.Stop()
	}

	// stdio, one client, a session at 2025-11-25.
	stdio := make([]*Server, len(specs))
	for i, sp := range specs {
		sctx, scancel := context.WithTimeout(ctx, 3*time.Minute)
		s, err := StartStdio(sctx, sp.name, sp.stdio, bins.root, Revisions[0])
		scancel()
		if err != nil {
			t.Fatal(err)
		}
		stdio[i] = s
		defer s.Stop()
	}
	var stdioRounds [][]Sample
	for r := range rounds {
		row := make([]Sample, len(stdio))
		for k := range stdio {
			i := (k + r) % len(stdio)
			s, err := RunStdio(ctx, stdio[i], d)
			if err != nil {
				t.Fatal(err)
			}
			row[i] = s
		}
		stdioRounds = append(stdioRounds, row)
	}

	var out strings.Builder
	fmt.Fprintf(&out, "%d rounds of %s per server, %s, GOMAXPROCS %d\n\n", rounds, d, time.Now().UTC().Format(time.RFC3339), goruntime.GOMAXPROCS(0))
	out.WriteString("| clients | revision | server | calls/s | × mcp-go | × its floor | CPU µs/call | of it in the plugin | load |\n|---:|---|---|---:|---:|---:|---:|---:|---|\n")
	index := func(name string) int { return slices.IndexFunc(specs, func(s server) bool { return s.name == name }) }
	ref := index("mcpgo")
	// A server's floor is the floor server with its tool where the
	// server has it: in a plugin for toolc serve, in process for the rest.
	floorOf := func(name string) int {
		switch {
		case strings.HasPrefix(name, "floor"):
			return -1
		case strings.HasPrefix(name, "toolc-serve"):
			return index("floor-plugin")
		}
		return index("floor")
	}
	table := func(label string, rows [][]Sample) {
		for i, sp := range specs {
			var rate, ratio, ofFloor, cpu, plugin, load []float64
			floor := floorOf(sp.name)
			for _, row := range rows {
				rate = append(rate, row[i].PerSecond())
				ratio = append(ratio, row[i].PerSecond()/row[ref].PerSecond())
				if floor >= 0 {
					ofFloor = append(ofFloor, row[i].PerSecond()/row[floor].PerSecond())
				}
				cpu = append(cpu, float64(row[i].CPUPerCall().Nanoseconds())/1e3)
				plugin = append(plugin, float64(row[i].PluginPerCall().Nanoseconds())/1e3)
				load = append(load, row[i].Load)
			}
			pl := ""
			if strings.HasPrefix(sp.name, "toolc-serve") || sp.name == "floor-plugin" {
				pl = fmt.Sprintf("%.0f", median(plugin))
			}
			fl := ""
			if floor >= 0 {
				fl = fmt.Sprintf("%.2f", median(ofFloor))
			}
			fmt.Fprintf(&out, "| %s | %s | %.0f | %.2f | %s | %.0f | %s | %.1f–%.1f |\n", label, sp.name, median(rate), median(ratio), fl, median(cpu), pl, slices.Min(load), slices.Max(load))
		}
	}
	for _, clients := range clientCounts {
		for _, rev := range Revisions {
			table(fmt.Sprintf("%d | %s", clients, rev), results[cell{clients, rev}])
		}
	}
	table("1 | stdio", stdioRounds)
	t.Log("\n" + out.String())
	if file := os.Getenv("TOOLC_SERVING_OUT"); long && file != "" {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestInputSchema holds weather.InputSchema, which the peers validate
// with, to the inputSchema that toolc projects from the contract.
func TestInputSchema(t *testing.T) {
	out, err := exec.Command(bins.toolc, "export", "--format", "mcp", "--catalog", bins.catalog).Output()
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(out, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != weather.Name {
		t.Fatalf("toolc exports %s, want the one tool %s", out, weather.Name)
	}
	var got, want any
	json.Unmarshal(tools[0].InputSchema, &want)
	json.Unmarshal([]byte(weather.InputSchema), &got)
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("weather.InputSchema is\n%s\ntoolc projects\n%s", g, w)
	}
}

// TestSameValidation checks that the servers that validate refuse the same
// bad arguments, each with a tool error, so that no server is faster in
// the comparison by checking less.
func TestSameValidation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, sp := range servers() {
		if strings.HasPrefix(sp.name, "floor") {
			continue // validates nothing, by design
		}
		t.Run(sp.name, func(t *testing.T) {
			s, err := StartHTTP(ctx, sp.name, sp.http, bins.root)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			for _, rev := range Revisions {
				c := newClient(s.URL, rev)
				if err := c.open(ctx); err != nil {
					t.Fatal(err)
				}
				for _, args := range []string{`{"city":""}`, `{"city":"Berlin","days":15}`, `{"city":"Berlin","unit":"kelvin"}`, `{"days":2}`, `{"city":"Berlin","wind":true}`} {
					c.body = CallBody(rev, args)
					resp, err := c.post(ctx, c.body, "tools/call")
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(c.buf.String(), `"isError":true`) {
						t.Errorf("%s at %s accepts %s: %s %.300s", sp.name, rev, args, resp.Status, c.buf.String())
					}
				}
				c.close()
			}
		})
	}
}
