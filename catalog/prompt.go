package catalog

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

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

// Skill is an Agent Skill that the service serves (MCP's Skills
// extension, SEP-2640): a directory beside the contract with a SKILL.md
// whose frontmatter names the skill Name. Its files are read when they
// are served, as a resource's file is, so that every digest a client is
// given is of the bytes it then reads.
type Skill struct {
	Name string `json:"name"`
	Pos  Pos    `json:"pos"`
	// Dir is the skill's directory, relative to the service's directory.
	Dir string `json:"dir"`
	// Description is its SKILL.md's frontmatter description as the
	// compiler read it: what toolc.lock records and toolc diff compares.
	// The server reads SKILL.md afresh whenever it serves the skill.
	Description string `json:"description,omitempty"`
}

// SkillScheme is the URI scheme of the files of skills.
const SkillScheme = "skill://"

// URI is the URI of the skill's SKILL.md, which names it in skills/get.
func (s *Skill) URI() string { return SkillScheme + s.Name + "/SKILL.md" }

// Root is the URI of the skill's directory: its files' URIs are below it.
func (s *Skill) Root() string { return SkillScheme + s.Name }

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

func blankSkills(ss []*Skill) []*Skill {
	out := make([]*Skill, len(ss))
	for i, sk := range ss {
		cp := *sk
		cp.Pos = Pos{}
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

// MCPPrompt is a prompt as a prompts/list result holds it.
type MCPPrompt struct {
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	Arguments   []MCPPromptArgument `json:"arguments,omitempty"`
}

// MCPPromptArgument is an argument of an MCPPrompt.
type MCPPromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// MCPResource is a resource as a resources/list result holds it.
type MCPResource struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	URI         string `json:"uri"`
}

// MCPResourceTemplate is a resource template as a
// resources/templates/list result holds it.
type MCPResourceTemplate struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	URITemplate string `json:"uriTemplate"`
}

// MCPPrompts is the catalog's prompts as a prompts/list result lists
// them, sorted by name.
func (c *Catalog) MCPPrompts() []MCPPrompt {
	out := []MCPPrompt{}
	for _, s := range c.Services {
		for _, p := range s.Prompts {
			mp := MCPPrompt{Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				mp.Arguments = append(mp.Arguments, MCPPromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			out = append(out, mp)
		}
	}
	slices.SortStableFunc(out, func(a, b MCPPrompt) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// MCPResources is the catalog's resources with a fixed URI as a
// resources/list result lists them, sorted by URI.
func (c *Catalog) MCPResources() []MCPResource {
	out := []MCPResource{}
	for _, s := range c.Services {
		for _, r := range s.Resources {
			if !r.IsTemplate() {
				out = append(out, MCPResource{Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, URI: r.URI})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b MCPResource) int { return strings.Compare(a.URI, b.URI) })
	return out
}

// MCPResourceTemplates is the catalog's resource templates as a
// resources/templates/list result lists them, sorted by template.
func (c *Catalog) MCPResourceTemplates() []MCPResourceTemplate {
	out := []MCPResourceTemplate{}
	for _, s := range c.Services {
		for _, r := range s.Resources {
			if r.IsTemplate() {
				out = append(out, MCPResourceTemplate{Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, URITemplate: r.URITemplate})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b MCPResourceTemplate) int { return strings.Compare(a.URITemplate, b.URITemplate) })
	return out
}

// placeholderRE is {{name}} in the text of a prompt message or a resource
// template, spaces inside the braces allowed.
var placeholderRE = regexp.MustCompile(`\{\{\s*([^{}\s]*)\s*\}\}`)

// Placeholders returns each {{name}} of a text: the whole placeholder and
// the name, in order.
func Placeholders(text string) [][2]string {
	var out [][2]string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		out = append(out, [2]string{m[0], m[1]})
	}
	return out
}

// Substitute replaces each {{name}} of a text with its value; with
// jsonString, escaped as inside a JSON string, for JSON content. A name
// without a value (an optional argument left out) becomes empty.
func Substitute(text string, vals map[string]string, jsonString bool) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	return placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		v := vals[placeholderRE.FindStringSubmatch(m)[1]]
		if jsonString {
			q, _ := json.Marshal(v)
			return string(q[1 : len(q)-1])
		}
		return v
	})
}
