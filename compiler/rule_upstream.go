package compiler

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolc/toolc/diag"
)

// upstreamRule checks a service's upstream block: the existing MCP server
// that serves its tools in place of a Go handler. It is checked here, at
// review time, because toolc serve would otherwise find the mistake only
// when it starts the server, and because the block must never hold a
// secret: env and headers say where a value comes from, not what it is.
var upstreamRule = &Rule{
	ID:       "upstream",
	Doc:      "upstream has command: [...] or url: \"https://...\" (not both), env only with command and headers only with url, each value from env: NAME or file: PATH, Go durations, and no handler beside it",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for s := range p.services() {
			if up := s.root.get("upstream"); up != nil {
				checkUpstream(p, s, up)
			}
		}
	},
}

var (
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	// upstreamKeys are the keys of an upstream block, for suggestions.
	upstreamKeys = []string{"command", "url", "dir", "env", "headers", "startTimeout", "callTimeout", "checkInterval"}
	// toolcSecrets are toolc's own secrets, which no upstream gets.
	toolcSecrets = []string{"TOOLC_TOKEN", "TOOLC_STATE_KEY"}
)

func checkUpstream(p *Pass, s service, up *node) {
	where := fmt.Sprintf("upstream of service %q", s.name())
	switch up.kind {
	case kError:
		return
	case kStruct:
	default:
		p.reportf(up.pos, "%s must be a struct such as {command: [\"npx\", \"-y\", \"@acme/docs-mcp@1.4.0\"]} or {url: \"https://docs.internal/mcp\"}, not %s", where, up.kind)
		return
	}
	if h := s.root.get("handler"); h != nil {
		p.reportf(h.pos, "service %q has an upstream MCP server, which serves its tools, and a Go handler: drop handler or upstream", s.name())
	}
	for _, k := range up.fields {
		if !slices.Contains(upstreamKeys, k.label) {
			p.reportf(k.pos, "unknown key %q in %s%s", k.label, where, suggest(k.label, upstreamKeys))
		}
	}
	cmd, u := up.get("command"), up.get("url")
	switch {
	case cmd == nil && u == nil:
		p.reportf(up.pos, "%s needs command: [\"PROGRAM\", ...] (a server toolc starts) or url: \"https://...\" (a Streamable HTTP endpoint)", where)
	case cmd != nil && u != nil:
		p.reportf(u.pos, "%s has both command and url; give one", where)
	}
	if cmd != nil {
		checkCommand(p, cmd, where)
	}
	if u != nil {
		checkUpstreamURL(p, u, where)
	}
	if d := up.get("dir"); d != nil {
		switch {
		case u != nil && cmd == nil:
			p.reportf(d.pos, "dir is the working directory of a command, and %s is a url", where)
		case d.kind != kString || strings.TrimSpace(d.str) == "":
			p.reportf(d.pos, "dir of %s must be a directory relative to the contract, such as \"data\"", where)
		}
	}
	if env := up.get("env"); env != nil {
		if u != nil && cmd == nil {
			p.reportf(env.pos, "env is the environment of a command, and %s is a url: send credentials in headers", where)
		} else {
			checkValues(p, env, "env of "+where, envNameRE, "an environment variable's name, such as DOCS_TOKEN")
		}
	}
	if hs := up.get("headers"); hs != nil {
		if cmd != nil && u == nil {
			p.reportf(hs.pos, "headers are sent to a url, and %s is a command: give it the value in env", where)
		} else {
			checkValues(p, hs, "headers of "+where, headerNameRE, "an HTTP header name, such as Authorization")
		}
	}
	for _, key := range []string{"startTimeout", "callTimeout", "checkInterval"} {
		d := up.get(key)
		if d == nil || d.kind == kError {
			continue
		}
		if d.kind != kString {
			p.reportf(d.pos, "%s of %s must be a duration such as \"30s\" or \"5m\", not %s", key, where, d.kind)
			continue
		}
		if v, err := time.ParseDuration(d.str); err != nil || v <= 0 {
			p.reportf(d.pos, "%s %q of %s is not a positive duration such as \"30s\", \"1m30s\" or \"500ms\"", key, d.str, where)
		}
	}
}

func checkCommand(p *Pass, cmd *node, where string) {
	switch {
	case cmd.kind == kError:
		return
	case cmd.kind != kList:
		p.reportf(cmd.pos, "command of %s must be a list of strings, the program and its arguments, such as [\"npx\", \"-y\", \"@acme/docs-mcp@1.4.0\"]; it is run without a shell, not %s", where, cmd.kind)
		return
	case len(cmd.elems) == 0:
		p.reportf(cmd.pos, "command of %s is empty; name the program to run, and its arguments", where)
		return
	}
	for i, e := range cmd.elems {
		switch {
		case e.kind != kString:
			p.reportf(e.pos, "command of %s holds %s; each element is a string", where, e.kind)
		case i == 0 && strings.TrimSpace(e.str) == "":
			p.reportf(e.pos, "command of %s starts with a blank program name", where)
		}
	}
}

func checkUpstreamURL(p *Pass, n *node, where string) {
	if n.kind == kError {
		return
	}
	if n.kind != kString {
		p.reportf(n.pos, "url of %s must be a string such as \"https://docs.internal/mcp\", not %s", where, n.kind)
		return
	}
	u, err := url.Parse(n.str)
	switch {
	case err != nil:
		p.reportf(n.pos, "url %q of %s does not parse: %v", n.str, where, err)
	case u.Scheme != "https" && u.Scheme != "http":
		p.reportf(n.pos, "url %q of %s must be https (or http on a loopback address), not %q", n.str, where, u.Scheme)
	case u.Host == "":
		p.reportf(n.pos, "url %q of %s has no host", n.str, where)
	case u.User != nil:
		p.reportf(n.pos, "url %q of %s carries credentials, which would be a secret in the contract: send them in headers, from env or a file", n.str, where)
	}
}

// checkValues checks a struct of names, each with a #ValueFrom.
func checkValues(p *Pass, n *node, where string, nameRE *regexp.Regexp, what string) {
	if n.kind == kError {
		return
	}
	if n.kind != kStruct {
		p.reportf(n.pos, "%s must be a struct of names, each with where its value comes from, such as {DOCS_TOKEN: {env: \"DOCS_TOKEN\"}}, not %s", where, n.kind)
		return
	}
	for _, v := range n.fields {
		if !nameRE.MatchString(v.label) {
			p.reportf(v.pos, "%q in %s is not %s", v.label, where, what)
			continue
		}
		checkValueFrom(p, v, fmt.Sprintf("%s in %s", v.label, where))
	}
}

func checkValueFrom(p *Pass, v *node, where string) {
	switch v.kind {
	case kError:
		return
	case kStruct:
	case kString:
		p.reportf(v.pos, "%s is a value written in the contract; say where it comes from instead, {env: \"NAME\"} (toolc's environment) or {file: \"PATH\"}, so that no secret is ever reviewed, committed or locked", where)
		return
	default:
		p.reportf(v.pos, "%s must be {env: \"NAME\"} or {file: \"PATH\"}, not %s", where, v.kind)
		return
	}
	for _, k := range v.fields {
		if !slices.Contains([]string{"env", "file", "prefix"}, k.label) {
			p.reportf(k.pos, "unknown key %q in %s%s", k.label, where, suggest(k.label, []string{"env", "file", "prefix"}))
			continue
		}
		if k.kind != kString && k.kind != kError {
			p.reportf(k.pos, "%s of %s must be a string, not %s", k.label, where, k.kind)
		}
	}
	env, file := v.get("env"), v.get("file")
	switch {
	case env == nil && file == nil:
		p.reportf(v.pos, "%s says not where its value comes from: add env: \"NAME\" (toolc's environment) or file: \"PATH\"", where)
	case env != nil && file != nil:
		p.reportf(file.pos, "%s has both env and file; give one", where)
	case env != nil && env.kind == kString && !envNameRE.MatchString(env.str):
		p.reportf(env.pos, "env %q of %s is not an environment variable's name", env.str, where)
	case env != nil && env.kind == kString && slices.Contains(toolcSecrets, env.str):
		p.reportf(env.pos, "%s would pass $%s, toolc's own secret, to the upstream server; no upstream gets it", where, env.str)
	case file != nil && file.kind == kString && strings.TrimSpace(file.str) == "":
		p.reportf(file.pos, "file of %s is blank; name the file that holds the value", where)
	}
}
