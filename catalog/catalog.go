// Package catalog holds the compiled form of toolc contracts: the Catalog,
// its services, tools and flat fields. The compiler lowers checked CUE
// contracts into these types; projections, the runtime and code generators
// read them. It imports no CUE, so that a service embedding a catalog stays
// small.
package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// Catalog is a set of services and their tools, sorted by name.
type Catalog struct {
	Services []*Service `json:"services"`
	// Fingerprint is the sha256 of the catalog's contents, set by Seal.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Service is one contract package.
type Service struct {
	Name        string `json:"name"`
	Pos         Pos    `json:"pos"`
	Version     string `json:"version"`
	Description string `json:"description"`
	// Dir is the contract directory, slash-separated and relative to the
	// directory that toolc ran in.
	Dir string `json:"dir"`
	// Handler is the handler's Go main package relative to Dir.
	Handler  string `json:"handler"`
	MCPTitle string `json:"mcpTitle,omitempty"`
	// Scopes are the service's own auth.scopes, sorted, each once: those
	// every one of its tools needs (each Tool's Scopes hold them too). A
	// caller without them may not learn that the service's tools exist;
	// one with them may, and is told which scopes a tool adds.
	Scopes []string `json:"scopes,omitempty"`
	// Prompts and Resources are the service's prompts and resources, in
	// the order the contract declares them.
	Prompts   []*Prompt   `json:"prompts,omitempty"`
	Resources []*Resource `json:"resources,omitempty"`
	// Skills are the service's Agent Skills (MCP's Skills extension), in
	// the order the contract declares them.
	Skills []*Skill `json:"skills,omitempty"`
	// Groups are the service's groups of tools, in the contract's order.
	Groups []*Group `json:"groups,omitempty"`
	// Upstream, when set, is the existing MCP server that serves the
	// service's tools in place of a Go handler.
	Upstream *Upstream `json:"upstream,omitempty"`
	Tools    []*Tool   `json:"tools"`
}

// Upstream is an existing MCP server that serves a service's tools: a
// command that toolc starts and speaks MCP to over stdio, or the URL of
// a Streamable HTTP endpoint. It holds no secret: Env and Headers say
// where each value comes from.
type Upstream struct {
	// Command is the program and its arguments; empty for a URL.
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
	// Dir is the command's working directory, slash-separated and
	// relative to the service's Dir; empty means Dir itself.
	Dir string `json:"dir,omitempty"`
	// Env are the command's variables, and Headers the URL's, in name
	// order.
	Env     []ValueFrom `json:"env,omitempty"`
	Headers []ValueFrom `json:"headers,omitempty"`
	// The timeouts as the contract writes them, Go durations ("30s");
	// empty means the default.
	StartTimeout  string `json:"startTimeout,omitempty"`
	CallTimeout   string `json:"callTimeout,omitempty"`
	CheckInterval string `json:"checkInterval,omitempty"`
}

// ValueFrom is a named value that an upstream gets, and where it comes
// from: toolc's environment variable Env, or the file File (relative to
// the service's Dir). Prefix goes before it, as "Bearer " does.
type ValueFrom struct {
	Name   string `json:"name"`
	Env    string `json:"env,omitempty"`
	File   string `json:"file,omitempty"`
	Prefix string `json:"prefix,omitempty"`
}

// Group is a named set of one service's tools: an OpenAI Responses
// namespace, an MCP group. Its name is unique across the catalog.
type Group struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Deferred is the group's defer: its tools are loaded on demand,
	// unless a tool says otherwise (Tool.Deferred holds the result).
	Deferred bool `json:"deferred,omitempty"`
}

// Group returns the service's group of the given name, or nil.
func (s *Service) Group(name string) *Group {
	for _, g := range s.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// Tool is one function that a model can call.
type Tool struct {
	Name string `json:"name"`
	Pos  Pos    `json:"pos"`
	// Fingerprint is the sha256 of the tool's contract, set by Seal: equal
	// fingerprints mean the same tool, wherever it was declared.
	Fingerprint string      `json:"fingerprint"`
	Description string      `json:"description"`
	Title       string      `json:"title,omitempty"`
	Deprecated  bool        `json:"deprecated,omitempty"`
	Strict      bool        `json:"strict,omitempty"`
	Annotations Annotations `json:"annotations"`
	Request     Message     `json:"request"`
	// Response is nil when the contract declares no response.
	Response *Message `json:"response,omitempty"`
	// Examples are argument objects, each a map from field name to value.
	Examples []map[string]any `json:"examples,omitempty"`
	// MCPName pins the exposed MCP name; empty means derived (see MCPName).
	MCPName string `json:"mcpName,omitempty"`
	// Task says whether the tool runs as a task of MCP's Tasks extension:
	// TaskOptional, TaskRequired, or "" for never.
	Task string `json:"task,omitempty"`
	// Scopes are the OAuth scopes a caller's access token must hold to
	// see and call the tool: its service's auth.scopes and its own,
	// sorted, each once. Empty means any authenticated caller.
	Scopes []string `json:"scopes,omitempty"`
	// Group is the name of the service's group the tool is in, if any.
	Group string `json:"group,omitempty"`
	// Deferred tools are loaded on demand: a projection leaves them out
	// of a request, or marks them so, and makes them reachable through a
	// search (see DeferLoading).
	Deferred bool `json:"deferred,omitempty"`
}

// The values of Tool.Task.
const (
	// TaskOptional: a client of the Tasks extension gets a task, any
	// other client a plain result.
	TaskOptional = "optional"
	// TaskRequired: only a client of the Tasks extension may call the
	// tool; it always gets a task.
	TaskRequired = "required"
)

// validTask reports whether s is a value of Tool.Task.
func validTask(s string) bool { return s == "" || s == TaskOptional || s == TaskRequired }

// Annotations are behaviour hints. Nil means unset, which MCP distinguishes
// from false.
type Annotations struct {
	ReadOnly    *bool `json:"readOnly,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"openWorld,omitempty"`
}

// Message is a set of fields: a tool's request or response. Its fields
// are scalars, arrays of scalars and records (arrays of flat objects).
type Message struct {
	Pos         Pos      `json:"pos"`
	Description string   `json:"description,omitempty"`
	Fields      []*Field `json:"fields"`
}

// Field returns the field with the given name, or nil.
func (m *Message) Field(name string) *Field {
	for _, f := range m.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Type is the type of a field or of an array's items.
type Type string

const (
	String  Type = "string"
	Integer Type = "integer"
	Number  Type = "number"
	Boolean Type = "boolean"
	Array   Type = "array"
	// Object is the items type of a record field: an array whose items
	// are flat objects, with the Field's Fields as their properties.
	Object Type = "object"
	// JSON is a free-form value: any JSON value, or with the Field's
	// Object set, any JSON object. Strict projections and Gemini's, which
	// cannot state an open value, take it as a string that holds its JSON
	// text, which the runtime parses back.
	JSON Type = "json"
)

// Field is one parameter or result value: a scalar, an array of scalars,
// or a record field, an array of flat objects (Items Object) whose
// properties are Fields.
//
// Values (Default, Enum, Examples) are JSON-shaped Go values: string, int64
// for integers, float64 for numbers, bool, []any for arrays and
// map[string]any for a record's items.
type Field struct {
	Name  string `json:"name"`
	Pos   Pos    `json:"pos"`
	Type  Type   `json:"type"`
	Items Type   `json:"items,omitempty"`
	// Fields are the fields of each item of a record field, in the order
	// the contract declares them: scalars and arrays of scalars, never
	// records themselves (records are one level deep).
	Fields      []*Field `json:"fields,omitempty"`
	Description string   `json:"description"`
	Required    bool     `json:"required"`
	Deprecated  bool     `json:"deprecated,omitempty"`
	Default     any      `json:"default,omitempty"`
	// Enum lists the allowed values; on an array field, of its items (a
	// multi-select).
	Enum     []any `json:"enum,omitempty"`
	Examples []any `json:"examples,omitempty"`

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

	// Object limits a JSON field to objects.
	Object bool `json:"object,omitempty"`

	// MCPHeader, on a request field, is the name part of the HTTP header
	// Mcp-Param-{MCPHeader} that MCP 2026-07-28 clients mirror the
	// argument into (SEP-2243), so that gateways can route on it; the MCP
	// projection carries it as "x-mcp-header".
	MCPHeader string `json:"mcpHeader,omitempty"`
}

// IsRecord reports whether f is a record field: an array of flat objects.
func (f *Field) IsRecord() bool { return f.Type == Array && f.Items == Object }

// Field returns the record field's field with the given name, or nil.
func (f *Field) Field(name string) *Field {
	for _, sub := range f.Fields {
		if sub.Name == name {
			return sub
		}
	}
	return nil
}

// Pos is a source position: a slash-separated file path relative to the
// directory that toolc ran in, and 1-based line and column. In JSON it is
// one string, "file:line:column", and the zero Pos is "".
type Pos struct {
	File   string
	Line   int
	Column int
}

// MarshalText writes p as "file:line:column": a catalog file holds
// thousands of positions, and a string takes a third of the room of an
// object and reads like a compiler's message.
func (p Pos) MarshalText() ([]byte, error) {
	return p.appendText(nil), nil
}

func (p Pos) appendText(b []byte) []byte {
	if p == (Pos{}) {
		return b
	}
	b = append(b, p.File...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(p.Line), 10)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(p.Column), 10)
}

// UnmarshalText reads what MarshalText writes. The file name may hold
// colons: the line and column are the last two parts.
func (p *Pos) UnmarshalText(text []byte) error {
	pos, ok := parsePos(string(text))
	if !ok {
		return &posError{string(text)}
	}
	*p = pos
	return nil
}

// trailingDigits returns the number that the up to nine digits before
// s[end] make, and where they start.
func trailingDigits(s string, end int) (n, start int) {
	mul := 1
	start = end
	for start > 0 && end-start < 9 && s[start-1]-'0' < 10 {
		n += int(s[start-1]-'0') * mul
		mul *= 10
		start--
	}
	return n, start
}

type posError struct{ text string }

func (e *posError) Error() string {
	return fmt.Sprintf("position %q is not file:line:column", e.text)
}

func parsePos(s string) (Pos, bool) {
	if s == "" {
		return Pos{}, true
	}
	// A catalog holds thousands: read the usual "file:line:column", with
	// up to nine digits each, from the end in one pass.
	col, c := trailingDigits(s, len(s))
	if c < len(s) && c > 0 && s[c-1] == ':' {
		line, l := trailingDigits(s, c-1)
		if l < c-1 && l > 0 && s[l-1] == ':' {
			return Pos{File: s[:l-1], Line: line, Column: col}, true
		}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Pos{}, false
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j < 0 {
		return Pos{}, false
	}
	line, err1 := strconv.Atoi(s[j+1 : i])
	col, err2 := strconv.Atoi(s[i+1:])
	if err1 != nil || err2 != nil {
		return Pos{}, false
	}
	return Pos{File: s[:j], Line: line, Column: col}, true
}
