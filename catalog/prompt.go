package catalog

// Prompt is a template that a user picks in a client: named string
// arguments, and either Messages, served as they are with each {{name}}
// replaced by the argument's value, or none, when the handler writes them.
type Prompt struct {
	Name        string `json:"name"`
	Pos         Pos    `json:"pos"`
	Description string `json:"description"`
	Title       string `json:"title,omitempty"`
	// Arguments are string fields, in the order the contract declares
	// them.
	Arguments []*Field `json:"arguments"`
	// Messages is nil for a prompt that a handler serves.
	Messages []*PromptMessage `json:"messages,omitempty"`
	// Scopes are the OAuth scopes a caller needs to see and get the
	// prompt: its service's and its own, sorted, each once.
	Scopes []string `json:"scopes,omitempty"`
}

// Argument returns the argument with the given name, or nil.
func (p *Prompt) Argument(name string) *Field {
	for _, f := range p.Arguments {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// PromptMessage is one message of a template prompt: its role and one
// kind of content. Text, URI and a resource's Text may hold {{name}}
// placeholders.
type PromptMessage struct {
	Role string `json:"role"`
	// Type is "text", "image", "audio" or "resource".
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// URI is an embedded resource's URI.
	URI string `json:"uri,omitempty"`
	// File, of an image, an audio clip or a resource, is relative to the
	// service's directory.
	File     string `json:"file,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// Resource is something a client may read: a fixed URI, or a URI template
// (RFC 6570) whose Variables are string fields.
type Resource struct {
	Name        string `json:"name"`
	Pos         Pos    `json:"pos"`
	Description string `json:"description"`
	Title       string `json:"title,omitempty"`
	// Exactly one of URI and URITemplate is set.
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Variables are the template's variables, in the order the contract
	// declares them.
	Variables []*Field `json:"variables,omitempty"`
	// Text is the content written in the contract; File a file that holds
	// it, relative to the service's directory. Neither means the handler
	// reads the resource.
	Text   string   `json:"text,omitempty"`
	File   string   `json:"file,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
}

// IsTemplate reports whether the resource is a resource template.
func (r *Resource) IsTemplate() bool { return r.URITemplate != "" }

// Static reports whether the contract holds the resource's content: text
// or a file, served without a handler.
func (r *Resource) Static() bool { return r.Text != "" || r.File != "" }

// Variable returns the template variable with the given name, or nil.
func (r *Resource) Variable(name string) *Field {
	for _, f := range r.Variables {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// blankPrompts returns the prompts with every position blank, for the
// canonical form that fingerprints hash.
func blankPrompts(ps []*Prompt) []*Prompt {
	out := make([]*Prompt, len(ps))
	for i, p := range ps {
		cp := *p
		cp.Pos = Pos{}
		cp.Arguments = blankFields(p.Arguments)
		out[i] = &cp
	}
	return out
}

func blankResources(rs []*Resource) []*Resource {
	out := make([]*Resource, len(rs))
	for i, r := range rs {
		cp := *r
		cp.Pos = Pos{}
		cp.Variables = blankFields(r.Variables)
		out[i] = &cp
	}
	return out
}

func blankFields(fs []*Field) []*Field {
	if fs == nil {
		return nil
	}
	out := make([]*Field, len(fs))
	for i, f := range fs {
		cp := *f
		cp.Pos = Pos{}
		cp.Fields = blankFields(f.Fields)
		out[i] = &cp
	}
	return out
}
