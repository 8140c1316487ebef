package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/toolc/toolc/internal/atomicfile"

	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/jsonfile"
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
	// sums are the tools' fingerprints as the fast decoder computed them
	// from the file's text, in order; halves counts the services arrays it
	// decoded in two halves.
	sums   []toolSum
	halves int
}

// Seal computes the fingerprints of every tool and of the catalog. The
// compiler seals what it builds; Marshal seals before it writes.
//
// A tool's fingerprint covers everything about it but its source
// positions, so that moving a declaration or renaming a file does not
// change it; the catalog's covers every service the same way, leaving out
// its directory too, and every tool through the tool's fingerprint.
func (c *Catalog) Seal() {
	fp, _, _, err := c.digest(true, nil)
	if err != nil {
		panic(fmt.Sprintf("catalog: fingerprint: %v", err)) // only JSON-shaped values reach here
	}
	c.Fingerprint = fp
}

// digest computes the fingerprints. A tool's is the sha256 of its
// canonical form: the tool as the catalog file holds it, compact, with an
// empty fingerprint and every position "" (encoding/json's encoding of the
// tool so blanked, without HTML escaping). The catalog's is the sha256 of
// its services in the same form, each with an empty directory and with
// its tools replaced by their fingerprints.
//
// With set, digest stores each tool's fingerprint. Without, it checks them
// and returns the first service and tool whose stored fingerprint is not
// the tool's; the catalog's fingerprint is then computed from the stored
// ones. sums, when not nil, holds for each tool, in order, the sha256 that
// the decoder computed from the tool's text in the file: when it matches,
// the tool is not encoded again.
func (c *Catalog) digest(set bool, sums []toolSum) (fingerprint string, badService *Service, badTool *Tool, err error) {
	// The canonical form of the catalog holds every tool's fingerprint.
	w := &writer{b: make([]byte, 0, 8192+80*c.toolCount())}
	k := 0
	for _, s := range c.Services {
		if s == nil {
			continue
		}
		for _, t := range s.Tools {
			if t == nil {
				continue
			}
			if !set && k < len(sums) && sums[k].ok && sums[k].matches(t.Fingerprint) {
				k++
				continue
			}
			k++
			w.b = w.b[:0]
			w.tool(t, "", true)
			got := sumString(sha256.Sum256(w.b))
			switch {
			case set:
				t.Fingerprint = got
			case got != t.Fingerprint && badTool == nil:
				badService, badTool = s, t
			}
		}
	}
	fingerprint, err = c.sumOfTools(w)
	return fingerprint, badService, badTool, err
}

// FingerprintOfTools returns the fingerprint the catalog has given the
// fingerprints its tools hold, without encoding or checking the tools:
// for a part of a sealed catalog, such as the tools that one caller may
// see, which must not be told the fingerprint of the whole.
func (c *Catalog) FingerprintOfTools() (string, error) {
	return c.sumOfTools(&writer{b: make([]byte, 0, 1024+80*c.toolCount())})
}

// sumOfTools is the catalog's fingerprint from its tools' stored ones:
// the sha256 of its services in canonical form, each with an empty
// directory and with its tools replaced by their fingerprints.
func (c *Catalog) sumOfTools(w *writer) (string, error) {
	w.b = w.b[:0]
	w.open('[')
	for _, s := range c.Services {
		w.next()
		if s == nil {
			w.null()
			continue
		}
		w.serviceHead(s, true)
		w.open('[')
		for _, t := range s.Tools {
			w.next()
			if t == nil {
				w.null()
				continue
			}
			w.str(t.Fingerprint)
		}
		w.close(']')
		w.close('}')
	}
	w.close(']')
	if w.err != nil {
		return "", w.err
	}
	return sumString(sha256.Sum256(w.b)), nil
}

func (c *Catalog) toolCount() int {
	n := 0
	for _, s := range c.Services {
		if s != nil {
			n += len(s.Tools)
		}
	}
	return n
}

// toolSum is the sha256 of a tool's canonical form, when ok.
type toolSum struct {
	sum [sha256.Size]byte
	ok  bool
}

// matches reports whether fp is "sha256:" and the sum in hex.
func (s *toolSum) matches(fp string) bool {
	var buf [len("sha256:") + 2*sha256.Size]byte
	copy(buf[:], "sha256:")
	hex.Encode(buf[len("sha256:"):], s.sum[:])
	return string(buf[:]) == fp
}

func sumString(sum [sha256.Size]byte) string {
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Marshal seals the catalog and encodes it as a catalog file:
// deterministic JSON, the same bytes for the same contracts, with a line
// for each service, tool and field.
func (c *Catalog) Marshal() ([]byte, error) {
	c.Seal()
	services := c.Services
	if services == nil {
		services = []*Service{}
	}
	w := &writer{b: make([]byte, 0, c.sizeHint())}
	w.catalogFile(&file{Format: Format, Fingerprint: c.Fingerprint, Services: services})
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '\n'), nil
}

// WriteFile writes the catalog to name through a temporary file in the same
// directory and a rename, so that readers never see half a catalog.
func (c *Catalog) WriteFile(name string) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.Write(name, data)
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
	f, ok := decodeFast(data)
	if !ok {
		var err error
		if f, err = decodeSlow(data); err != nil {
			return nil, err
		}
	}
	return f.catalog()
}

// decodeSlow decodes a catalog file with encoding/json and normalizes its
// values, and explains what is wrong with one that it cannot decode.
func decodeSlow(data []byte) (*file, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FormatError{"empty file: not a toolc catalog"}
	}
	format, has, err := jsonfile.Format(data)
	switch {
	case err != nil:
		return nil, &FormatError{describeJSONError(data, err)}
	case !has:
		return nil, &FormatError{`no "format" key: not a toolc catalog`}
	case format != Format:
		return nil, &FormatError{versionMismatch(format)}
	}
	// jsonfile.Format has rejected anything after the object already.
	var f file
	if err := jsonfile.Strict(data, &f); err != nil {
		return nil, &FormatError{describeJSONError(data, err)}
	}
	if f.Services == nil {
		f.Services = []*Service{}
	}
	if err := (&Catalog{Services: f.Services}).normalize(); err != nil {
		return nil, &FormatError{err.Error()}
	}
	return &f, nil
}

// catalog checks a decoded file's fingerprints.
func (f *file) catalog() (*Catalog, error) {
	c := &Catalog{Services: f.Services, Fingerprint: f.Fingerprint}
	got, s, t, err := c.digest(false, f.sums)
	switch {
	case err != nil:
		return nil, &FormatError{err.Error()}
	case t != nil:
		return nil, &FormatError{fmt.Sprintf("tool %q of service %q does not match its fingerprint: the file was edited or damaged; rebuild it with toolc build", t.Name, s.Name)}
	case got != c.Fingerprint:
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
// The file must be a regular file within inputfile's limit (64 MiB unless
// $TOOLC_MAX_INPUT raises it): a device or a FIFO is refused, not read.
func LoadFile(name string) (*Catalog, error) {
	data, err := inputfile.ReadFile(name)
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
	// encoding/json does not say where a position is malformed: find the
	// first such position.
	if pos := (*posError)(nil); errors.As(err, &pos) {
		if i := bytes.Index(data, []byte(`"`+pos.text+`"`)); i >= 0 {
			line, col := jsonfile.LineCol(data, int64(i+1))
			return fmt.Sprintf("corrupt file at line %d, column %d: %v; %s", line, col, pos, rebuild)
		}
	}
	return jsonfile.Describe(data, err, "toolc catalog", rebuild)
}

// rebuild is what to do about a damaged catalog file.
const rebuild = "rebuild it with toolc build"

// normalize restores the Go types of values after decoding: integers as
// int64, numbers as float64, nested lists element by element.
func (c *Catalog) normalize() error {
	for _, s := range c.Services {
		if s == nil {
			return errors.New("a service is null")
		}
		if err := normalizeEntries(s); err != nil {
			return err
		}
		for _, t := range s.Tools {
			if t == nil {
				return fmt.Errorf("service %q: a tool is null", s.Name)
			}
			if !validTask(t.Task) {
				return fmt.Errorf("tool %q: task %q is neither %q nor %q", t.Name, t.Task, TaskOptional, TaskRequired)
			}
			msgs := []*Message{&t.Request}
			if t.Response != nil {
				msgs = append(msgs, t.Response)
			}
			for _, m := range msgs {
				if m.Fields == nil {
					m.Fields = []*Field{}
				}
				if err := normalizeFields(t, m.Fields, ""); err != nil {
					return err
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

// normalizeEntries normalizes the values of a service's prompt arguments
// and template variables. Normalizing twice changes nothing.
func normalizeEntries(s *Service) error {
	for _, p := range s.Prompts {
		if p == nil {
			return fmt.Errorf("service %q: a prompt is null", s.Name)
		}
		if p.Arguments == nil {
			p.Arguments = []*Field{}
		}
		if err := normalizeFields(&Tool{Name: p.Name}, p.Arguments, ""); err != nil {
			return fmt.Errorf("prompt: %v", err)
		}
	}
	for _, r := range s.Resources {
		if r == nil {
			return fmt.Errorf("service %q: a resource is null", s.Name)
		}
		if err := normalizeFields(&Tool{Name: r.Name}, r.Variables, ""); err != nil {
			return fmt.Errorf("resource: %v", err)
		}
	}
	for _, sk := range s.Skills {
		if sk == nil {
			return fmt.Errorf("service %q: a skill is null", s.Name)
		}
	}
	return nil
}

// normalizeFields normalizes the values of fields, and of the fields of
// record fields; prefix names a record field's fields in errors
// ("edits[].").
func normalizeFields(t *Tool, fields []*Field, prefix string) error {
	for _, f := range fields {
		if f == nil {
			return fmt.Errorf("tool %q: a field is null", t.Name)
		}
		name := prefix + f.Name
		var err error
		if f.Default, err = normalizeValue(f.Default, f); err != nil {
			return fmt.Errorf("tool %q field %q default: %v", t.Name, name, err)
		}
		for i := range f.Enum {
			if f.Enum[i], err = normalizeValue(f.Enum[i], f); err != nil {
				return fmt.Errorf("tool %q field %q enum: %v", t.Name, name, err)
			}
		}
		for i := range f.Examples {
			if f.Examples[i], err = normalizeValue(f.Examples[i], f); err != nil {
				return fmt.Errorf("tool %q field %q example: %v", t.Name, name, err)
			}
		}
		if err := normalizeFields(t, f.Fields, name+"[]."); err != nil {
			return err
		}
	}
	return nil
}

// normalizeValue converts json.Numbers to int64 where the field (or array
// item, or field of a record's item) is an integer and the number is
// integral, and to float64 otherwise.
func normalizeValue(v any, f *Field) (any, error) {
	return normalizeIn(v, f.elem(), f.record())
}

// NormalizeValue restores the Go types of a value decoded with
// json.Decoder.UseNumber, for a field of type typ (items for arrays): an
// integral number of an integer field becomes int64, any other number
// float64, recursively through arrays and objects. The lock file reads its
// defaults and enums with it too.
func NormalizeValue(v any, typ, items Type) (any, error) {
	elem := typ
	if typ == Array {
		elem = items
	}
	return normalizeIn(v, elem, nil)
}

// normalizeIn normalizes v as the fast decoder's value does: numbers for
// elem, through arrays, and the members of objects for the fields of
// record, the fields of a record's items.
func normalizeIn(v any, elem Type, record []*Field) (any, error) {
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
			if x[i], err = normalizeIn(x[i], elem, record); err != nil {
				return nil, err
			}
		}
		return x, nil
	case map[string]any:
		for k := range x {
			f := fieldNamed(record, k)
			var err error
			if x[k], err = normalizeIn(x[k], f.elem(), f.record()); err != nil {
				return nil, err
			}
		}
		return x, nil
	}
	return v, nil
}
