package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Format is the format version of catalog files that this package reads
// and writes.
const Format = "toolc.catalog/v1"

// file is the catalog file: the format, the fingerprint of the whole
// catalog, and the services.
type file struct {
	Format      string     `json:"format"`
	Fingerprint string     `json:"fingerprint"`
	Services    []*Service `json:"services"`
}

// Seal computes the fingerprints of every tool and of the catalog. The
// compiler seals what it builds; Marshal seals before it writes.
//
// A tool's fingerprint covers everything about it but its source
// positions, so that moving a declaration or renaming a file does not
// change it; the catalog's covers every service and tool the same way.
func (c *Catalog) Seal() {
	for _, s := range c.Services {
		for _, t := range s.Tools {
			t.Fingerprint = t.fingerprint()
		}
	}
	c.Fingerprint = c.fingerprint()
}

func (t *Tool) fingerprint() string {
	cp := *t
	cp.Fingerprint = ""
	return digest(withoutPositions(&cp))
}

func (c *Catalog) fingerprint() string {
	services := make([]*Service, len(c.Services))
	for i, s := range c.Services {
		cp := *s
		cp.Pos = Pos{}
		cp.Tools = make([]*Tool, len(s.Tools))
		for j, t := range s.Tools {
			cp.Tools[j] = withoutPositions(t)
		}
		services[i] = &cp
	}
	return digest(services)
}

func withoutPositions(t *Tool) *Tool {
	cp := *t
	cp.Pos = Pos{}
	cp.Request = stripMessage(t.Request)
	if t.Response != nil {
		r := stripMessage(*t.Response)
		cp.Response = &r
	}
	return &cp
}

func stripMessage(m Message) Message {
	m.Pos = Pos{}
	fields := make([]*Field, len(m.Fields))
	for i, f := range m.Fields {
		cp := *f
		cp.Pos = Pos{}
		fields[i] = &cp
	}
	m.Fields = fields
	return m
}

func digest(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("catalog: fingerprint: %v", err)) // only JSON-shaped values reach here
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Marshal seals the catalog and encodes it as a catalog file: indented,
// deterministic JSON, the same bytes for the same contracts.
func (c *Catalog) Marshal() ([]byte, error) {
	c.Seal()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	services := c.Services
	if services == nil {
		services = []*Service{}
	}
	if err := enc.Encode(file{Format: Format, Fingerprint: c.Fingerprint, Services: services}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteFile writes the catalog to name through a temporary file in the same
// directory and a rename, so that readers never see half a catalog.
func (c *Catalog) WriteFile(name string) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	if err := writeAtomic(name, data); err != nil {
		// Name the file the caller asked for, not the temporary one.
		var pe *fs.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe):
			err = pe.Err
		case errors.As(err, &le):
			err = le.Err
		}
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

func writeAtomic(name string, data []byte) error {
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return errors.New("is a directory")
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// A FormatError says that data is not a catalog this version can read.
type FormatError struct {
	Msg string
}

func (e *FormatError) Error() string { return "catalog: " + e.Msg }

// Parse decodes a catalog file. It rejects another format version, a
// corrupt or truncated file, and a file whose fingerprints do not match its
// contents, as after a hand edit.
func Parse(data []byte) (*Catalog, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FormatError{"empty file: not a toolc catalog"}
	}
	var probe struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, &FormatError{describeJSONError(data, err)}
	}
	switch {
	case probe.Format == nil:
		return nil, &FormatError{`no "format" key: not a toolc catalog`}
	case *probe.Format != Format:
		return nil, &FormatError{versionMismatch(*probe.Format)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, &FormatError{describeJSONError(data, err)}
	}
	if dec.More() {
		return nil, &FormatError{"trailing data after the catalog"}
	}
	c := &Catalog{Services: f.Services, Fingerprint: f.Fingerprint}
	if c.Services == nil {
		c.Services = []*Service{}
	}
	if err := c.normalize(); err != nil {
		return nil, &FormatError{err.Error()}
	}
	want := c.Fingerprint
	for _, s := range c.Services {
		for _, t := range s.Tools {
			if got := t.fingerprint(); t.Fingerprint != got {
				return nil, &FormatError{fmt.Sprintf("tool %q of service %q does not match its fingerprint: the file was edited or damaged; rebuild it with toolc build", t.Name, s.Name)}
			}
		}
	}
	if got := c.fingerprint(); want != got {
		return nil, &FormatError{"the catalog does not match its fingerprint: the file was edited or damaged; rebuild it with toolc build"}
	}
	return c, nil
}

// versionMismatch explains a format that is not Format: a newer or older
// catalog version, or not a catalog at all.
func versionMismatch(got string) string {
	const prefix = "toolc.catalog/v"
	if !strings.HasPrefix(got, prefix) {
		return fmt.Sprintf("format %q: not a toolc catalog", got)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(got, prefix))
	this, _ := strconv.Atoi(strings.TrimPrefix(Format, prefix))
	switch {
	case err == nil && n > this:
		return fmt.Sprintf("format %q is newer than %q, the version this toolc reads: upgrade toolc, or rebuild the catalog with this one (toolc build)", got, Format)
	case err == nil && n < this:
		return fmt.Sprintf("format %q is older than %q, the version this toolc reads: rebuild the catalog (toolc build)", got, Format)
	}
	return fmt.Sprintf("format %q is not %q: rebuild the catalog with this toolc (toolc build)", got, Format)
}

// Load reads and parses a catalog file from fsys, for example an embed.FS
// holding a catalog built by `toolc build`.
func Load(fsys fs.FS, name string) (*Catalog, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// LoadFile reads and parses a catalog file from the operating system.
func LoadFile(name string) (*Catalog, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input"):
		return "truncated file: the JSON ends early"
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Sprintf("corrupt file at line %d, column %d: %v", line, col, syn)
	case errors.As(err, &typ) && typ.Field == "":
		return "not a toolc catalog: the file holds a JSON " + typ.Value + ", not an object"
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset)
		return fmt.Sprintf("corrupt file at line %d, column %d: %s must not be %s", line, col, typ.Field, typ.Value)
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown key " + key + ": the file was edited, or written by another version of toolc; rebuild it with toolc build"
	}
	return "corrupt file: " + err.Error()
}

// lineCol returns the 1-based line and column of the byte before offset:
// encoding/json reports the offset just past the character that broke
// the syntax, or just past the value of the wrong type.
func lineCol(data []byte, offset int64) (int, int) {
	offset = max(0, min(offset, int64(len(data)))-1)
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// normalize restores the Go types of values after decoding: integers as
// int64, numbers as float64, nested lists element by element.
func (c *Catalog) normalize() error {
	for _, s := range c.Services {
		if s == nil {
			return errors.New("a service is null")
		}
		for _, t := range s.Tools {
			if t == nil {
				return fmt.Errorf("service %q: a tool is null", s.Name)
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
					if f == nil {
						return fmt.Errorf("tool %q: a field is null", t.Name)
					}
					var err error
					if f.Default, err = normalizeValue(f.Default, f); err != nil {
						return fmt.Errorf("tool %q field %q default: %v", t.Name, f.Name, err)
					}
					for i := range f.Enum {
						if f.Enum[i], err = normalizeValue(f.Enum[i], f); err != nil {
							return fmt.Errorf("tool %q field %q enum: %v", t.Name, f.Name, err)
						}
					}
					for i := range f.Examples {
						if f.Examples[i], err = normalizeValue(f.Examples[i], f); err != nil {
							return fmt.Errorf("tool %q field %q example: %v", t.Name, f.Name, err)
						}
					}
				}
			}
			for _, ex := range t.Examples {
				for name, v := range ex {
					var err error
					if ex[name], err = normalizeValue(v, t.Request.Field(name)); err != nil {
						return fmt.Errorf("tool %q example argument %q: %v", t.Name, name, err)
					}
				}
			}
		}
	}
	return nil
}

// normalizeValue converts json.Numbers to int64 where the field (or array
// item) is an integer and the number is integral, and to float64 otherwise.
func normalizeValue(v any, f *Field) (any, error) {
	elem := Type("")
	if f != nil {
		elem = f.Type
		if f.Type == Array {
			elem = f.Items
		}
	}
	switch x := v.(type) {
	case json.Number:
		if elem == Integer {
			if i, err := x.Int64(); err == nil {
				return i, nil
			}
		}
		fl, err := x.Float64()
		if err != nil || math.IsInf(fl, 0) {
			return nil, fmt.Errorf("number %s out of range", x)
		}
		return fl, nil
	case []any:
		for i := range x {
			var err error
			if x[i], err = normalizeValue(x[i], &Field{Type: elem}); err != nil {
				return nil, err
			}
		}
		return x, nil
	case map[string]any:
		for k := range x {
			var err error
			if x[k], err = normalizeValue(x[k], nil); err != nil {
				return nil, err
			}
		}
		return x, nil
	}
	return v, nil
}
