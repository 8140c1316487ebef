package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/toolc/toolc/internal/atomicfile"
	"github.com/toolc/toolc/internal/inputfile"
)

// Outcome says what Install did to the server's entry.
type Outcome int

const (
	Unchanged Outcome = iota // the entry was there as it would be written
	Added                    // there was no entry of that name
	Updated                  // the entry was there, and some of its keys changed
)

// Result is what Install did.
type Result struct {
	Outcome Outcome
	// Changed are the keys of the entry that Install set to a new value,
	// in the entry's order: "command", "args", "env.PATH".
	Changed []string
	// File is the file written (or left alone).
	File string
}

// Install puts s into the client's configuration at p: it sets the keys
// of the entry that toolc owns (type, command, args, and each variable
// of env) and keeps every other server, every other key of the entry and
// of the file (a variable the user added to env among them), in their
// order. The file is written through a temporary file and a rename, with
// its mode kept, and only when something changed; a symbolic link is
// followed, not replaced. A file that is not JSON, or whose servers are
// not an object, is left alone, with an error that says why; so is a
// JSONC file with comments, which a rewrite would lose.
func (c Client) Install(p Place, s Server) (Result, error) {
	res := Result{File: p.File}
	if s.Name == "" {
		return res, errors.New("the server has no name")
	}
	file := p.File
	if target, err := filepath.EvalSymlinks(file); err == nil {
		file = target
	}
	doc, mode, err := readConfig(file)
	if err != nil {
		return res, err
	}
	entry := append(slices.Clone(p.Keys), s.Name)
	old, err := get(doc, entry)
	if err != nil {
		return res, fmt.Errorf("%s: %v", p.File, err)
	}
	res.Outcome = Updated
	if old == nil {
		res.Outcome = Added
	}
	type field struct {
		keys  []string
		value any
	}
	var fields []field
	if c.typed {
		fields = append(fields, field{[]string{"type"}, "stdio"})
	}
	fields = append(fields, field{[]string{"command"}, s.Command}, field{[]string{"args"}, s.Args})
	for _, k := range sortedKeys(s.Env) {
		fields = append(fields, field{[]string{"env", k}, s.Env[k]})
	}
	for _, f := range fields {
		value, err := marshal(f.value)
		if err != nil {
			return res, err
		}
		var was json.RawMessage
		if doc, was, err = set(doc, append(slices.Clone(entry), f.keys...), value); err != nil {
			return res, fmt.Errorf("%s: %v", p.File, err)
		}
		if !sameJSON(was, value) {
			res.Changed = append(res.Changed, strings.Join(f.keys, "."))
		}
	}
	if len(res.Changed) == 0 {
		res.Outcome = Unchanged
		return res, nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, doc, "", "  "); err != nil {
		return res, err
	}
	out.WriteByte('\n')
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return res, err
	}
	return res, atomicfile.WritePerm(file, out.Bytes(), mode)
}

// readConfig reads a configuration file, or none: an empty object, to be
// written with mode 0600, since a client's configuration may hold the
// secrets of other servers' env. An existing file keeps its mode.
func readConfig(file string) (doc []byte, mode fs.FileMode, err error) {
	data, err := inputfile.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []byte("{}"), 0o600, nil
	case err != nil:
		return nil, 0, err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, 0, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return []byte("{}"), fi.Mode().Perm(), nil
	}
	if _, err := members(data); err != nil {
		return nil, 0, fmt.Errorf("%s: %v; toolc install edits only plain JSON, and leaves this file alone (comments, as JSONC allows, would be lost): fix it, or add the entry by hand", file, err)
	}
	return data, fi.Mode().Perm(), nil
}

func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// member is one key of a JSON object and its value, as written.
type member struct {
	key   string
	value json.RawMessage
}

// members splits a JSON object into its members, in order, each value as
// it is written; anything but one object is an error.
func members(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("%s, not an object", kindOf(data))
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var m member
		m.key = tok.(string) // inside an object, the decoder gives keys as strings
		if err := dec.Decode(&m.value); err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the object")
	}
	return ms, nil
}

func kindOf(data []byte) string {
	switch t := bytes.TrimSpace(data); {
	case len(t) == 0:
		return "nothing"
	case t[0] == '[':
		return "an array"
	case t[0] == '"':
		return "a string"
	}
	return "a value"
}

// encode writes members as a compact object.
func encode(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// get returns the value at keys in doc, or nil where a key is missing; a
// value on the way that is not an object is an error.
func get(doc []byte, keys []string) (json.RawMessage, error) {
	for i, k := range keys {
		ms, err := members(doc)
		if err != nil {
			return nil, fmt.Errorf("%s is %v", where(keys[:i]), err)
		}
		j := slices.IndexFunc(ms, func(m member) bool { return m.key == k })
		if j < 0 {
			return nil, nil
		}
		doc = ms[j].value
	}
	return doc, nil
}

// set returns doc with the value at keys replaced by value, or added as the
// last member of its object, with the objects on the way made where they
// are missing; and the value it replaced (nil if none). The members around
// it keep their order and their text.
func set(doc []byte, keys []string, value json.RawMessage) ([]byte, json.RawMessage, error) {
	return setAt(doc, keys, 0, value)
}

func setAt(doc []byte, keys []string, i int, value json.RawMessage) ([]byte, json.RawMessage, error) {
	ms, err := members(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("%s is %v", where(keys[:i]), err)
	}
	j := slices.IndexFunc(ms, func(m member) bool { return m.key == keys[i] })
	if j < 0 {
		ms = append(ms, member{key: keys[i], value: json.RawMessage("{}")})
		j = len(ms) - 1
		if i == len(keys)-1 {
			ms[j].value = nil
		}
	}
	var old json.RawMessage
	if i == len(keys)-1 {
		old, ms[j].value = ms[j].value, value
	} else if ms[j].value, old, err = setAt(ms[j].value, keys, i+1, value); err != nil {
		return nil, nil, err
	}
	return encode(ms), old, nil
}

// where names an object by its keys, for an error: the top level, or
// "mcpServers.my-tools".
func where(keys []string) string {
	if len(keys) == 0 {
		return "the file"
	}
	return fmt.Sprintf("%q", strings.Join(keys, "."))
}
