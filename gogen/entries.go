package gogen

import (
	"fmt"
	"strconv"

	"github.com/toolc/toolc/catalog"
)

// handled is a prompt or resource whose contract does not hold its
// content: the handler serves it, through a method of Tools.
type handled struct {
	name, description string
	pos               catalog.Pos
	resource          bool
	method            string
	// argsType is the struct of the prompt's arguments or the template's
	// variables, all strings.
	argsType string
	fields   []*catalog.Field
}

var (
	pluginsHandlePrompt    = goIdent{pluginsPath, "HandlePrompt"}
	pluginsHandleResource  = goIdent{pluginsPath, "HandleResource"}
	pluginsPromptMessage   = goIdent{pluginsPath, "PromptMessage"}
	pluginsResourceRequest = goIdent{pluginsPath, "ResourceRequest"}
	pluginsResourceContent = goIdent{pluginsPath, "ResourceContents"}
)

// planHandled names the methods and types of the prompts and resources that
// a handler serves: NamePrompt and NamePromptArgs, NameResource and
// NameResourceVars, so that a prompt, a resource and a tool of one name
// never meet in Go.
func (g *generator) planHandled(methods map[string]origin) {
	for _, p := range g.svc.Prompts {
		if p.Messages != nil {
			continue
		}
		g.addHandled(methods, &handled{name: p.Name, description: p.Description, pos: p.Pos, fields: p.Arguments}, "Prompt", "Args", "prompt")
	}
	for _, r := range g.svc.Resources {
		if r.Static() {
			continue
		}
		g.addHandled(methods, &handled{name: r.Name, description: r.Description, pos: r.Pos, resource: true, fields: r.Variables}, "Resource", "Vars", "resource")
	}
}

func (g *generator) addHandled(methods map[string]origin, h *handled, suffix, typeSuffix, kind string) {
	what := fmt.Sprintf("%s %q", kind, h.name)
	h.method = goName(h.name) + suffix
	h.argsType = h.method + typeSuffix
	if !g.validName(h.method, what, h.pos) || !g.claim(methods, h.method, origin{what, h.pos}) ||
		!g.claim(g.names, h.argsType, origin{what, h.pos}) {
		return
	}
	for _, f := range h.fields {
		if !g.validName(goName(f.Name), fmt.Sprintf("argument %q of %s", f.Name, what), f.Pos) {
			return
		}
	}
	g.handled = append(g.handled, h)
}

// genHandledMethods writes the methods of Tools for the handled prompts
// and resources.
func (g *generator) genHandledMethods(f *generatedFile) {
	for _, h := range g.handled {
		f.P()
		if h.resource {
			f.Comment(1, h.method+" reads resource "+h.name+". "+sentence(h.description)+
				" It returns the contents, each with its text, or its blob for binary content; a content's URI and MIME type default to the request's and the contract's.")
			f.P(h.method, "(ctx ", contextContext, ", req ", pluginsResourceRequest, "[", h.argsType, "]) ([]", pluginsResourceContent, ", error)")
			continue
		}
		f.Comment(1, h.method+" writes the messages of prompt "+h.name+". "+sentence(h.description))
		f.P(h.method, "(ctx ", contextContext, ", args ", h.argsType, ") ([]", pluginsPromptMessage, ", error)")
	}
}

func (g *generator) genHandledHandlers(f *generatedFile) {
	for _, h := range g.handled {
		if h.resource {
			f.P(pluginsHandleResource, "(", strconv.Quote(h.name), ", impl.", h.method, "),")
		} else {
			f.P(pluginsHandlePrompt, "(", strconv.Quote(h.name), ", impl.", h.method, "),")
		}
	}
}

// genHandledTypes writes the argument and variable structs: strings, as
// MCP passes them, held to the contract before the method runs.
func (g *generator) genHandledTypes(f *generatedFile) {
	for _, h := range g.handled {
		what := "the arguments of prompt " + h.name
		if h.resource {
			what = "the variables of resource " + h.name + "'s URI template"
		}
		f.Comment(0, h.argsType+" holds "+what+". The runtime checks them against the contract, and fills in defaults, before the method runs; an optional one left out is empty.")
		f.P("type ", h.argsType, " struct {")
		for _, fl := range h.fields {
			f.Comment(1, sentence(fl.Description))
			f.P(goName(fl.Name), " string `json:", strconv.Quote(fl.Name+",omitempty"), "`")
		}
		f.P("}")
		f.P()
	}
}
