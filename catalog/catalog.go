// Package catalog holds the compiled form of toolc contracts: the Catalog,
// its services, tools and flat fields. The compiler lowers checked CUE
// contracts into these types; projections, the runtime and code generators
// read them. It imports no CUE, so that a service embedding a catalog stays
// small.
package catalog

// Catalog is a set of services and their tools, sorted by name.
type Catalog struct {
	Services []*Service `json:"services"`
	// Fingerprint is the sha256 of the catalog's contents, set by Seal.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Service is one contract package.
type Service struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	// Dir is the contract directory, slash-separated and relative to the
	// directory that toolc ran in.
	Dir string `json:"dir"`
	// Handler is the handler's Go main package relative to Dir.
	Handler  string  `json:"handler"`
	MCPTitle string  `json:"mcpTitle,omitempty"`
	Tools    []*Tool `json:"tools"`
	Pos      Pos     `json:"pos"`
}

// Tool is one function that a model can call.
type Tool struct {
	Name string `json:"name"`
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
	Pos     Pos    `json:"pos"`
}

// Annotations are behaviour hints. Nil means unset, which MCP distinguishes
// from false.
type Annotations struct {
	ReadOnly    *bool `json:"readOnly,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"openWorld,omitempty"`
}

// Message is a flat set of fields: a tool's request or response.
type Message struct {
	Description string   `json:"description,omitempty"`
	Fields      []*Field `json:"fields"`
	Pos         Pos      `json:"pos"`
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
)

// Field is one flat parameter or result value.
//
// Values (Default, Enum, Examples) are JSON-shaped Go values: string, int64
// for integers, float64 for numbers, bool, and []any for arrays.
type Field struct {
	Name        string `json:"name"`
	Type        Type   `json:"type"`
	Items       Type   `json:"items,omitempty"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Deprecated  bool   `json:"deprecated,omitempty"`
	Default     any    `json:"default,omitempty"`
	Enum        []any  `json:"enum,omitempty"`
	Examples    []any  `json:"examples,omitempty"`

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

	Pos Pos `json:"pos"`
}

// Pos is a source position: a slash-separated file path relative to the
// directory that toolc ran in, and 1-based line and column.
type Pos struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}
