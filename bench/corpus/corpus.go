// Package corpus writes a synthetic but realistic corpus of toolc contract
// packages, for benchmarks that compare `toolc check` with `cue vet -c`.
//
// A corpus is a CUE module laid out as `toolc init` lays out a user
// project: cue.mod/module.cue, and the strict contract schema vendored at
// cue.mod/pkg/github.com/toolc/toolc/schema, so that `cue vet -c ./...`
// works offline in the corpus directory. Below services/ is one directory,
// and one CUE package, per service. Its service.cue embeds schema.#Service;
// the tools are spread over one file per resource, each of which adds
// tools: x: {...} to the package, as the design allows.
//
// The output is a pure function of Config: the same seed and sizes give the
// same bytes. Every contract passes `toolc check` without errors (warnings,
// such as provider-limit for catalogs of more than 128 tools, are expected)
// and `cue vet -c ./...`.
package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolc/toolc/schema"
)

// Module is the CUE module path of a generated corpus.
const Module = "bench.example/corpus@v0"

// DefaultToolsPerService is the number of tools per service that ForTools
// uses.
const DefaultToolsPerService = 20

// DefaultSeed is the seed that ForTools uses.
const DefaultSeed = 1

// cueLanguage is the CUE language version the corpus module declares, as
// `toolc init` does.
const cueLanguage = "v0.17.0"

// Config sizes a corpus.
type Config struct {
	// Services is the number of service packages.
	Services int
	// Tools is the number of tools in each service.
	Tools int
	// Seed selects the corpus; the same seed gives the same files.
	Seed uint64
}

// ForTools returns the configuration of a corpus of total tools, rounded
// up to a multiple of DefaultToolsPerService, in services of
// DefaultToolsPerService tools. It is what the benchmarks use.
func ForTools(total int) Config {
	return Config{Services: (total + DefaultToolsPerService - 1) / DefaultToolsPerService, Tools: DefaultToolsPerService, Seed: DefaultSeed}
}

// Stats describes a written corpus.
type Stats struct {
	Services       int
	Tools          int
	RequestFields  int
	ResponseFields int
	Examples       int   // tool examples
	Files          int   // .cue files, the vendored schema included
	Bytes          int64 // of all .cue files
}

func (s Stats) String() string {
	return fmt.Sprintf("%d services, %d tools, %d request fields, %d response fields, %d examples, %d files, %d bytes",
		s.Services, s.Tools, s.RequestFields, s.ResponseFields, s.Examples, s.Files, s.Bytes)
}

// Write writes the corpus that cfg describes into dir, which must be empty
// or not exist yet: a corpus written over another would mix the two.
func Write(dir string, cfg Config) (Stats, error) {
	if cfg.Services < 1 || cfg.Tools < 1 {
		return Stats{}, fmt.Errorf("corpus: need at least one service and one tool per service, not %d × %d", cfg.Services, cfg.Tools)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Stats{}, err
	case len(entries) > 0:
		return Stats{}, fmt.Errorf("corpus: %s is not empty", dir)
	}
	files, g := generate(cfg)
	var st Stats
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return Stats{}, err
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return Stats{}, err
		}
		if strings.HasSuffix(f.Name, ".cue") {
			st.Files++
			st.Bytes += int64(len(f.Data))
		}
	}
	g.Files, g.Bytes = st.Files, st.Bytes
	return g, nil
}

// A File is one file of a corpus, named by its slash-separated path
// relative to the corpus root.
type File struct {
	Name string
	Data []byte
}

// Generate returns the files of the corpus that cfg describes, in the
// order that Write writes them.
func Generate(cfg Config) []File {
	files, _ := generate(cfg)
	return files
}

func generate(cfg Config) ([]File, Stats) {
	files := []File{
		{"cue.mod/module.cue", []byte(fmt.Sprintf("module: %q\nlanguage: {\n\tversion: %q\n}\n", Module, cueLanguage))},
		{"cue.mod/pkg/" + schema.ImportPath + "/" + schema.FileName, []byte(schema.Source())},
	}
	g := newGen(cfg)
	for i := range cfg.Services {
		files = append(files, g.service(i)...)
	}
	return files, g.stats
}

type gen struct {
	cfg   Config
	rng   *rand.Rand
	stats Stats
	// instances counts the services made from each domain so far, for
	// unique service and tool names.
	instances map[string]int
}

func newGen(cfg Config) *gen {
	return &gen{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x746f6f6c63)), instances: map[string]int{}}
}

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

// between returns an int in [lo, hi].
func (g *gen) between(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

// A tool as generated, before it is written.
type toolSpec struct {
	name     string
	noun     string
	verb     verb
	request  []fieldSpec
	response []fieldSpec
}

type fieldSpec struct {
	tmpl     fieldTmpl
	name     string
	desc     string
	cons     []kv
	required bool
	def      any // nil: none
	examples []any
}

func (g *gen) service(i int) []File {
	d := domains[i%len(domains)]
	g.instances[d.name]++
	n := g.instances[d.name]
	svcName, slug := d.name, d.name
	if n > 1 {
		svcName = fmt.Sprintf("%s-%d", d.name, n)
		slug = fmt.Sprintf("%s%d", d.name, n)
	}
	pkg := strings.ReplaceAll(svcName, "-", "_")
	dir := "services/" + svcName + "/"
	g.stats.Services++

	// Pick the tools: distinct verb and noun pairs, in a seeded order.
	var pairs [][2]int
	for ni := range d.nouns {
		for vi := range verbs {
			pairs = append(pairs, [2]int{ni, vi})
		}
	}
	g.rng.Shuffle(len(pairs), func(a, b int) { pairs[a], pairs[b] = pairs[b], pairs[a] })
	byNoun := map[string][]toolSpec{}
	var nounOrder []string
	for t := range g.cfg.Tools {
		p := pairs[t%len(pairs)]
		noun, v := d.nouns[p[0]], verbs[p[1]]
		name := slug + "_" + v.name + "_" + noun
		if t >= len(pairs) {
			name += "_" + strconv.Itoa(t/len(pairs)+1)
		}
		if v.name == "list" || v.name == "search" || v.name == "export" || v.name == "count" || v.name == "sync" {
			name = slug + "_" + v.name + "_" + plural(noun)
			if t >= len(pairs) {
				name += "_" + strconv.Itoa(t/len(pairs)+1)
			}
		}
		ts := g.tool(name, noun, v)
		if byNoun[noun] == nil {
			nounOrder = append(nounOrder, noun)
		}
		byNoun[noun] = append(byNoun[noun], ts)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport \"github.com/toolc/toolc/schema\"\n\n", pkg)
	fmt.Fprintf(&b, "schema.#Service & {\n")
	fmt.Fprintf(&b, "\tname:        %q\n", svcName)
	fmt.Fprintf(&b, "\tversion:     %q\n", fmt.Sprintf("%d.%d.%d", g.between(0, 3), g.between(0, 20), g.between(0, 9)))
	about := d.about
	if n > 1 {
		about += fmt.Sprintf(", instance %d", n)
	}
	fmt.Fprintf(&b, "\tdescription: %q\n", about)
	if g.chance(0.3) {
		fmt.Fprintf(&b, "\tmcp: title: %q\n", d.title)
	}
	b.WriteString("}\n")
	files := []File{{dir + "service.cue", []byte(b.String())}}

	slices.Sort(nounOrder)
	for _, noun := range nounOrder {
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n\n// Tools on %s.\n", pkg, plural(human(noun)))
		for _, ts := range byNoun[noun] {
			b.WriteString("\n")
			g.writeTool(&b, ts)
		}
		files = append(files, File{dir + noun + ".cue", []byte(b.String())})
	}
	return files
}

func (g *gen) tool(name, noun string, v verb) toolSpec {
	ts := toolSpec{name: name, noun: noun, verb: v}
	g.stats.Tools++
	seen := map[string]bool{}
	add := func(t fieldTmpl, response bool) {
		fs := g.field(t, noun, response)
		if seen[fs.name] || len(fs.name) > 64 {
			return
		}
		seen[fs.name] = true
		if response {
			ts.response = append(ts.response, fs)
		} else {
			ts.request = append(ts.request, fs)
		}
	}
	for _, name := range v.fields {
		add(tmplNamed(fieldTmpls, name), false)
	}
	// Between one and eight request fields in all, most often three to five.
	want := min(len(v.fields)+len(v.pool), g.between(1, 4)+g.between(0, 4))
	pool := slices.Clone(v.pool)
	g.rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
	for _, name := range pool {
		if len(ts.request) >= want {
			break
		}
		add(tmplNamed(fieldTmpls, name), false)
	}
	g.stats.RequestFields += len(ts.request)

	if g.chance(0.8) {
		seen = map[string]bool{}
		resp := slices.Clone(responseTmpls)
		g.rng.Shuffle(len(resp), func(a, b int) { resp[a], resp[b] = resp[b], resp[a] })
		for _, t := range resp[:g.between(1, 5)] {
			add(t, true)
		}
		g.stats.ResponseFields += len(ts.response)
	}
	return ts
}

func tmplNamed(ts []fieldTmpl, name string) fieldTmpl {
	for _, t := range ts {
		if t.name == name {
			return t
		}
	}
	panic("corpus: no field template " + name)
}

// field instantiates a template: some constraints dropped, required or
// optional, a default on some optional fields, examples on a few.
func (g *gen) field(t fieldTmpl, noun string, response bool) fieldSpec {
	fs := fieldSpec{tmpl: t, name: strings.ReplaceAll(t.name, "{noun}", noun), desc: subst(t.desc, noun)}
	if !response && g.chance(0.3) {
		fs.desc += ". " + subst(fieldSentences[g.rng.IntN(len(fieldSentences))], noun)
	}
	for _, c := range t.cons {
		if g.chance(0.8) {
			fs.cons = append(fs.cons, c)
		}
	}
	fs.required = g.chance(t.required)
	if !response && !fs.required && len(t.samples) > 0 && g.chance(0.5) {
		fs.def = t.samples[0]
	}
	if !response && len(t.samples) > 0 && g.chance(0.1) {
		fs.examples = t.samples
	}
	return fs
}

func (g *gen) writeTool(b *strings.Builder, ts toolSpec) {
	v, noun := ts.verb, ts.noun
	fmt.Fprintf(b, "tools: %s: {\n", ts.name)
	desc := subst(v.desc, noun)
	for range g.between(0, 3) {
		desc += " " + subst(toolSentences[g.rng.IntN(len(toolSentences))], noun)
	}
	fmt.Fprintf(b, "\tdescription: %q\n", desc)
	if g.chance(0.5) {
		fmt.Fprintf(b, "\ttitle:       %q\n", upperFirst(subst(v.title, noun)))
	}
	var ann []string
	if v.readOnly {
		ann = append(ann, "readOnly: true")
	}
	if v.destructive {
		ann = append(ann, "destructive: true")
	}
	if v.idempotent && g.chance(0.7) {
		ann = append(ann, "idempotent: true")
	}
	if g.chance(0.3) {
		ann = append(ann, "openWorld: "+strconv.FormatBool(g.chance(0.5)))
	}
	if len(ann) > 0 && g.chance(0.85) {
		fmt.Fprintf(b, "\tannotations: {%s}\n", strings.Join(ann, ", "))
	}
	if g.chance(0.1) {
		b.WriteString("\tstrict:      true\n")
	}
	if g.chance(0.03) {
		b.WriteString("\tdeprecated:  true\n")
	}

	b.WriteString("\trequest: {\n")
	if g.chance(0.6) {
		fmt.Fprintf(b, "\t\tdescription: %q\n", "Arguments of "+human(ts.name))
	}
	writeFields(b, ts.request)
	b.WriteString("\t}\n")
	if len(ts.response) > 0 {
		b.WriteString("\tresponse: {\n")
		if g.chance(0.4) {
			fmt.Fprintf(b, "\t\tdescription: %q\n", "What "+human(ts.name)+" returns")
		}
		writeFields(b, ts.response)
		b.WriteString("\t}\n")
	}

	// Examples: one or two argument objects for most tools, each with every
	// required field and some optional ones.
	if g.chance(0.7) {
		var exs []string
		for range g.between(1, 2) {
			var args []string
			for _, f := range ts.request {
				if !f.required && !g.chance(0.4) {
					continue
				}
				s := f.tmpl.samples[g.rng.IntN(len(f.tmpl.samples))]
				args = append(args, f.name+": "+cueValue(s))
			}
			exs = append(exs, "{"+strings.Join(args, ", ")+"}")
		}
		g.stats.Examples += len(exs)
		fmt.Fprintf(b, "\texamples: [%s]\n", strings.Join(exs, ", "))
	}
	b.WriteString("}\n")
}

func writeFields(b *strings.Builder, fields []fieldSpec) {
	if len(fields) == 0 {
		b.WriteString("\t\tfields: {}\n")
		return
	}
	b.WriteString("\t\tfields: {\n")
	for _, f := range fields {
		parts := []string{"type: " + strconv.Quote(f.tmpl.typ)}
		if f.tmpl.items != "" {
			parts = append(parts, "items: "+strconv.Quote(f.tmpl.items))
		}
		parts = append(parts, "description: "+strconv.Quote(f.desc))
		if !f.required {
			parts = append(parts, "required: false")
		}
		if f.def != nil {
			parts = append(parts, "default: "+cueValue(f.def))
		}
		for _, c := range f.cons {
			parts = append(parts, c.key+": "+cueValue(c.val))
		}
		if len(f.examples) > 0 {
			parts = append(parts, "examples: "+cueValue(f.examples))
		}
		fmt.Fprintf(b, "\t\t\t%s: {%s}\n", f.name, strings.Join(parts, ", "))
	}
	b.WriteString("\t\t}\n")
}

// cueValue renders a Go value as a CUE literal. Floats keep a fraction, so
// that CUE reads them as floats.
func cueValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x) // ASCII only, so Go's quoting is CUE's
	case int:
		return strconv.Itoa(x)
	case float64:
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	case bool:
		return strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = cueValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	panic(fmt.Sprintf("corpus: no CUE literal for %T", v))
}

func subst(s, noun string) string {
	s = strings.ReplaceAll(s, "{nouns}", plural(human(noun)))
	return strings.ReplaceAll(s, "{noun}", human(noun))
}

// human turns a snake_case name into words.
func human(s string) string { return strings.ReplaceAll(s, "_", " ") }

func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "y") && !strings.HasSuffix(s, "ey") && !strings.HasSuffix(s, "ay"):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	}
	return s + "s"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
