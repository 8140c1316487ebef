// Package lock holds toolc.lock, the record of the tool contracts that
// models, prompts and clients depend on, and Diff, which classifies every
// change against it as breaking or compatible.
//
// A Lock is made from a compiled catalog and written with Marshal:
//
//	l := lock.FromCatalog(res.Catalog)
//	data := l.Marshal() // deterministic, indented JSON, "format": "toolc.lock/v1"
//
// and read back with Parse or LoadFile, which reject a corrupt file, a file
// edited by hand (its fingerprint no longer matches) and a newer format.
// Diff(old, new) compares two locks; the new side usually comes from
// FromCatalog, so that each change carries the position of the new
// contract.
//
// The package imports the catalog, not CUE.
package lock

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolc/toolc/internal/atomicfile"

	"github.com/toolc/toolc/catalog"

	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/jsonfile"
)

// Format is the format version of the lock files that this package reads
// and writes.
const Format = "toolc.lock/v1"

// FileName is the name of the lock file that toolc reads and writes in the
// directory it runs in.
const FileName = "toolc.lock"

// Lock is the stable surface of a set of services: for each tool, its
// names, its request and its response, field by field.
type Lock struct {
	// Services are sorted by name and directory when the lock is written.
	Services []*Service `json:"services"`
	// File is the file that the lock was loaded from, if any; messages
	// about a service that is gone name it.
	File string `json:"-"`
	// source is the catalog that FromCatalog made the lock from (see
	// Catalog).
	source *catalog.Catalog
}

// Service is one contract package.
type Service struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Dir is the contract directory, slash-separated and relative to the
	// directory that toolc ran in.
	Dir   string  `json:"dir"`
	Tools []*Tool `json:"tools"`
	// Prompts and Resources are sorted by name; a service without them
	// leaves them out of the file.
	Prompts   []*Prompt   `json:"prompts,omitempty"`
	Resources []*Resource `json:"resources,omitempty"`
	// Skills are sorted by name, and left out as prompts are: a lock
	// written before toolc recorded skills still reads, as a service
	// without any.
	Skills []*Skill    `json:"skills,omitempty"`
	Pos    catalog.Pos `json:"-"`
}

// Tool is one tool: its function name and the MCP name that clients see,
// what a model reads about it, and its request and response.
type Tool struct {
	Name        string               `json:"name"`
	MCPName     string               `json:"mcpName"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description"`
	Annotations *catalog.Annotations `json:"annotations,omitempty"`
	Request     Message              `json:"request"`
	// Response is nil when the contract declares no response.
	Response *Message `json:"response,omitempty"`
	// Scopes are the OAuth scopes a caller needs, sorted (see
	// catalog.Tool.Scopes): a new one locks out callers, so Diff holds
	// them like the request.
	Scopes []string `json:"scopes,omitempty"`
	// Task is the tool's task support (catalog.Tool.Task): "required"
	// turns away every client without MCP's Tasks extension, so Diff
	// holds it like a scope.
	Task string      `json:"task,omitempty"`
	Pos  catalog.Pos `json:"-"`
}

// Message is a request or a response.
type Message struct {
	// Fingerprint is the sha256 of the fields as the wire sees them
	// (names, types, requiredness, defaults, enums and bounds, but no
	// descriptions): two requests with one fingerprint accept the same
	// calls.
	Fingerprint string      `json:"fingerprint"`
	Description string      `json:"description,omitempty"`
	Fields      []*Field    `json:"fields"`
	Pos         catalog.Pos `json:"-"`
}

// Field is one field. Values (Default, Enum) are JSON-shaped, as in the
// catalog: string, int64 for integers, float64 for numbers, bool.
//
// A record field (Items "object") is followed by the fields of its items,
// each a Field of its own named with the record's name, "[]." and its
// name (edits[].oldText), so that Diff compares them like any field.
type Field struct {
	Name        string       `json:"name"`
	Type        catalog.Type `json:"type"`
	Items       catalog.Type `json:"items,omitempty"`
	Description string       `json:"description"`
	Required    bool         `json:"required"`
	Default     any          `json:"default,omitempty"`
	// Enum is sorted: the order of an enum is no part of the contract.
	Enum []any `json:"enum,omitempty"`

	MinLength *int64 `json:"minLength,omitempty"`
	MaxLength *int64 `json:"maxLength,omitempty"`
	Pattern   string `json:"pattern,omitempty"`
	Format    string `json:"format,omitempty"`

	Minimum          *float64 `json:"minimum,omitempty"`
	Maximum          *float64 `json:"maximum,omitempty"`
	ExclusiveMinimum *float64 `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum *float64 `json:"exclusiveMaximum,omitempty"`

	MinItems    *int64 `json:"minItems,omitempty"`
	MaxItems    *int64 `json:"maxItems,omitempty"`
	UniqueItems bool   `json:"uniqueItems,omitempty"`

	// Object limits a free-form (json) field to objects.
	Object bool `json:"object,omitempty"`

	Pos catalog.Pos `json:"-"`
}

// FromCatalog records a catalog's contracts, with their source positions
// (which Marshal leaves out).
func FromCatalog(c *catalog.Catalog) *Lock {
	l := &Lock{Services: []*Service{}, source: c}
	for _, s := range c.Services {
		ls := &Service{Name: s.Name, Version: s.Version, Dir: s.Dir, Tools: []*Tool{}, Pos: s.Pos,
			Prompts: fromPrompts(s.Prompts), Resources: fromResources(s.Resources), Skills: fromSkills(s)}
		for _, t := range s.Tools {
			lt := &Tool{
				Name:        t.Name,
				MCPName:     t.ExposedMCPName(s.Name),
				Title:       t.Title,
				Description: t.Description,
				Request:     fromMessage(&t.Request),
				Scopes:      slices.Clone(t.Scopes),
				Task:        t.Task,
				Pos:         t.Pos,
			}
			if a := t.Annotations; a.ReadOnly != nil || a.Destructive != nil || a.Idempotent != nil || a.OpenWorld != nil {
				lt.Annotations = &a
			}
			if t.Response != nil {
				m := fromMessage(t.Response)
				lt.Response = &m
			}
			ls.Tools = append(ls.Tools, lt)
		}
		l.Services = append(l.Services, ls)
	}
	l.sort()
	return l
}

func fromMessage(m *catalog.Message) Message {
	out := Message{Description: m.Description, Fields: []*Field{}, Pos: m.Pos}
	for _, f := range m.Fields {
		out.Fields = append(out.Fields, fromField(f, f.Name))
		for _, sub := range f.Fields {
			out.Fields = append(out.Fields, fromField(sub, RecordFieldName(f.Name, sub.Name)))
		}
	}
	out.Fingerprint = out.fingerprint()
	return out
}

func fromField(f *catalog.Field, name string) *Field {
	return &Field{
		Name: name, Type: f.Type, Items: f.Items, Description: f.Description,
		Required: f.Required, Default: f.Default, Enum: slices.Clone(f.Enum),
		MinLength: f.MinLength, MaxLength: f.MaxLength, Pattern: f.Pattern, Format: f.Format,
		Minimum: f.Minimum, Maximum: f.Maximum, ExclusiveMinimum: f.ExclusiveMinimum, ExclusiveMaximum: f.ExclusiveMaximum,
		MinItems: f.MinItems, MaxItems: f.MaxItems, UniqueItems: f.UniqueItems, Object: f.Object,
		Pos: f.Pos,
	}
}

// RecordFieldName is the lock's name of field sub of the items of record
// field record: edits[].oldText.
func RecordFieldName(record, sub string) string {
	return record + recordSep + sub
}

const recordSep = "[]."

// recordOf splits the name of a field of a record's items into the
// record's name and the field's; ok is false for any other field.
func recordOf(name string) (record, sub string, ok bool) {
	return strings.Cut(name, recordSep)
}

// sort puts services, tools, fields and enum values in the order that
// Marshal writes, so that the same contracts give the same bytes whatever
// the order in which they were found.
func (l *Lock) sort() {
	slices.SortStableFunc(l.Services, func(a, b *Service) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Dir, b.Dir))
	})
	for _, s := range l.Services {
		s.sortEntries()
		slices.SortStableFunc(s.Tools, func(a, b *Tool) int { return cmp.Compare(a.Name, b.Name) })
		for _, t := range s.Tools {
			t.Request.sort()
			if t.Response != nil {
				t.Response.sort()
			}
		}
	}
}

func (m *Message) sort() {
	slices.SortStableFunc(m.Fields, func(a, b *Field) int { return cmp.Compare(a.Name, b.Name) })
	for _, f := range m.Fields {
		slices.SortStableFunc(f.Enum, compareValues)
	}
}

// compareValues orders enum values: numbers by value, anything else by
// its JSON text.
func compareValues(a, b any) int {
	fa, oka := number(a)
	fb, okb := number(b)
	if oka && okb {
		return cmp.Compare(fa, fb)
	}
	return cmp.Compare(valueText(a), valueText(b))
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// valueText is a value's canonical JSON text, by which values compare.
func valueText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// fingerprint covers the fields as the wire sees them: everything but
// descriptions, positions and order. It sorts its own copy, so a message
// fresh from a catalog (fields in declaration order) and the same message
// read from a lock file (sorted) get one fingerprint, and a rename is
// found against the lock as it is against a git ref.
func (m *Message) fingerprint() string {
	shapes := make([]*Field, len(m.Fields))
	for i, f := range m.Fields {
		shapes[i] = f.shape()
	}
	slices.SortStableFunc(shapes, func(a, b *Field) int { return cmp.Compare(a.Name, b.Name) })
	return digest(shapes)
}

// shape is the field without what a model reads about it, its enum in the
// order Marshal writes: two fields of one shape accept the same values.
func (f *Field) shape() *Field {
	cp := *f
	cp.Description = ""
	cp.Pos = catalog.Pos{}
	cp.Enum = slices.Clone(f.Enum)
	slices.SortStableFunc(cp.Enum, compareValues)
	return &cp
}

func digest(v any) string {
	data, err := marshal(v, false)
	if err != nil {
		panic(fmt.Sprintf("lock: fingerprint: %v", err)) // only JSON-shaped values reach here
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// marshal encodes without HTML escaping, so that a pattern such as
// ^<[a-z]+>$ reads in the file as it does in the contract.
func marshal(v any, indent bool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// file is the lock file: the format, the fingerprint of everything in it,
// and the services.
type file struct {
	Format      string     `json:"format"`
	Fingerprint string     `json:"fingerprint"`
	Services    []*Service `json:"services"`
}

// Marshal encodes the lock as a lock file: indented JSON, sorted, the same
// bytes for the same contracts, with a fingerprint that Parse checks so
// that a hand edit is detected.
func (l *Lock) Marshal() []byte {
	l.sort()
	services := l.Services
	if services == nil {
		services = []*Service{}
	}
	for _, s := range services {
		for _, t := range s.Tools {
			t.Request.Fingerprint = t.Request.fingerprint()
			if t.Response != nil {
				t.Response.Fingerprint = t.Response.fingerprint()
			}
		}
	}
	data, err := marshal(&file{Format: Format, Fingerprint: digest(services), Services: services}, true)
	if err != nil {
		panic(fmt.Sprintf("lock: marshal: %v", err)) // only JSON-shaped values reach here
	}
	return data
}

// WriteFile writes the lock to name through a temporary file in the same
// directory and a rename, so that no reader sees half a lock and a failed
// write leaves the old one as it was.
func (l *Lock) WriteFile(name string) error {
	return atomicfile.Write(name, l.Marshal())
}

// A FormatError says that data is not a lock file that this version of
// toolc can read.
type FormatError struct {
	Msg string
}

func (e *FormatError) Error() string { return "lock: " + e.Msg }

const regenerate = "regenerate it from the contracts with toolc lock"

// Parse decodes a lock file. It rejects another format version, a corrupt
// or truncated file, and a file whose fingerprint does not match its
// contents, as after a hand edit or a bad merge.
func Parse(data []byte) (*Lock, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FormatError{"empty file: not a toolc lock file"}
	}
	format, has, err := jsonfile.Format(data)
	switch {
	case err != nil:
		return nil, &FormatError{jsonfile.Describe(data, err, "toolc lock file", regenerate)}
	case !has:
		return nil, &FormatError{`no "format" key: not a toolc lock file`}
	case format != Format:
		return nil, &FormatError{versionMismatch(format)}
	}
	var f file
	if err := jsonfile.Strict(data, &f); err != nil {
		return nil, &FormatError{jsonfile.Describe(data, err, "toolc lock file", regenerate)}
	}
	if f.Services == nil {
		return nil, &FormatError{`no "services" key: ` + regenerate}
	}
	if digest(f.Services) != f.Fingerprint {
		return nil, &FormatError{"the file does not match its fingerprint: it was edited by hand or damaged (a merge conflict?); " + regenerate}
	}
	l := &Lock{Services: f.Services}
	if err := l.check(); err != nil {
		return nil, &FormatError{err.Error() + "; " + regenerate}
	}
	return l, nil
}

// check rejects what toolc never writes, and restores the Go types of
// values: integers as int64, numbers as float64.
func (l *Lock) check() error {
	for _, s := range l.Services {
		if s == nil || s.Name == "" {
			return errors.New("a service has no name")
		}
		if s.Tools == nil {
			s.Tools = []*Tool{}
		}
		for _, p := range s.Prompts {
			if p == nil || p.Name == "" || slices.Contains(p.Arguments.Fields, nil) {
				return fmt.Errorf("service %q: a prompt or one of its arguments has no name", s.Name)
			}
		}
		for _, r := range s.Resources {
			if r == nil || r.Name == "" || r.Variables != nil && slices.Contains(r.Variables.Fields, nil) {
				return fmt.Errorf("service %q: a resource or one of its variables has no name", s.Name)
			}
		}
		for _, sk := range s.Skills {
			if sk == nil || sk.Name == "" {
				return fmt.Errorf("service %q: a skill has no name", s.Name)
			}
		}
		for _, t := range s.Tools {
			if t == nil || t.Name == "" {
				return fmt.Errorf("service %q: a tool has no name", s.Name)
			}
			msgs := []*Message{&t.Request}
			if t.Response != nil {
				msgs = append(msgs, t.Response)
			}
			for _, m := range msgs {
				if m.Fields == nil {
					m.Fields = []*Field{}
				}
				for _, f := range m.Fields {
					if f == nil || f.Name == "" {
						return fmt.Errorf("tool %q: a field has no name", t.Name)
					}
					var err error
					if f.Default, err = normalize(f.Default, f); err != nil {
						return fmt.Errorf("tool %q field %q default: %v", t.Name, f.Name, err)
					}
					for i := range f.Enum {
						if f.Enum[i], err = normalize(f.Enum[i], f); err != nil {
							return fmt.Errorf("tool %q field %q enum: %v", t.Name, f.Name, err)
						}
					}
				}
				if m.fingerprint() != m.Fingerprint {
					return fmt.Errorf("tool %q: the fields do not match their fingerprint", t.Name)
				}
			}
		}
	}
	return nil
}

// normalize restores the Go types of a default or enum value, which is a
// scalar or an array of scalars.
func normalize(v any, f *Field) (any, error) {
	if _, ok := v.(map[string]any); ok {
		return nil, errors.New("an object is not a field value")
	}
	if items, ok := v.([]any); ok && slices.ContainsFunc(items, func(x any) bool { _, obj := x.(map[string]any); return obj }) {
		return nil, errors.New("an object is not a field value")
	}
	return catalog.NormalizeValue(v, f.Type, f.Items)
}

func versionMismatch(got string) string {
	const prefix = "toolc.lock/v"
	if !strings.HasPrefix(got, prefix) {
		if strings.HasPrefix(got, "toolc.catalog/") {
			return fmt.Sprintf("format %q: a toolc catalog, not a lock file", got)
		}
		return fmt.Sprintf("format %q: not a toolc lock file", got)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(got, prefix))
	this, _ := strconv.Atoi(strings.TrimPrefix(Format, prefix))
	switch {
	case err == nil && n > this:
		return fmt.Sprintf("format %q is newer than %q, the version this toolc reads: upgrade toolc", got, Format)
	case err == nil && n < this:
		return fmt.Sprintf("format %q is older than %q, the version this toolc reads: %s", got, Format, regenerate)
	}
	return fmt.Sprintf("format %q is not %q: %s", got, Format, regenerate)
}

// LoadFile reads and parses a lock file.
// The file must be a regular file within inputfile's limit, as
// catalog.LoadFile's.
func LoadFile(name string) (*Lock, error) {
	data, err := inputfile.ReadFile(name)
	if err != nil {
		return nil, err
	}
	l, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l.File = name
	return l, nil
}

// Split divides the lock's services into those whose directories the
// patterns cover and the rest. Patterns are Go-style, as toolc takes them
// ("./...", "./examples/...", "./examples/weather"; none means "./..."),
// relative to wd, as the services' directories are. It looks at no file:
// a directory that is gone is still covered by the patterns that named it.
func (l *Lock) Split(wd string, patterns []string) (in, out *Lock) {
	in = &Lock{Services: []*Service{}, File: l.File, source: l.source}
	out = &Lock{Services: []*Service{}, File: l.File, source: l.source}
	covers := scope(wd, patterns)
	for _, s := range l.Services {
		if covers(s.Dir) {
			in.Services = append(in.Services, s)
		} else {
			out.Services = append(out.Services, s)
		}
	}
	return in, out
}

func scope(wd string, patterns []string) func(dir string) bool {
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	type pat struct {
		base string
		wild bool
	}
	var pats []pat
	for _, p := range patterns {
		base, wild := strings.CutSuffix(filepath.ToSlash(p), "...")
		if base == "" {
			base = "."
		}
		if filepath.IsAbs(filepath.FromSlash(base)) && wd != "" {
			if rel, err := filepath.Rel(wd, filepath.FromSlash(base)); err == nil {
				base = filepath.ToSlash(rel)
			}
		}
		base = path.Clean(base)
		if !wild && strings.HasSuffix(base, ".cue") {
			base = path.Dir(base) // a file names its package
		}
		pats = append(pats, pat{base, wild})
	}
	return func(dir string) bool {
		dir = path.Clean(dir)
		for _, p := range pats {
			switch {
			case dir == p.base:
				return true
			case p.wild && p.base == "." && dir != ".." && !strings.HasPrefix(dir, "../") && !path.IsAbs(dir):
				return true
			case p.wild && strings.HasPrefix(dir, p.base+"/"):
				return true
			}
		}
		return false
	}
}
