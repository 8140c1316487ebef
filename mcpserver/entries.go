package mcpserver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/contentfile"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/validate"
)

// entries serves the catalog's prompts and resources: the template prompts
// and static resources that the contract holds whole, their argument and
// variable checks, completions from their enums, and list_changed when a
// swap changes them. Like the tool list, go-sdk's lists follow each swap;
// the handlers look the prompt or resource up in the index of the swap
// they run after, so that a reload never serves half of each.
type entries struct {
	rt  *runtime.Runtime
	srv *mcp.Server
	ask *asker // the server's, for the questions of prompt handlers
	ttl int    // ttlMs of the skills' results, as of the lists
	// pageSize is the most skills that one skills/list page holds: go-sdk's
	// default page size, which pages the other lists.
	pageSize int
	// declaredSkills: the server declares the Skills extension whether
	// or not the catalog has skills (toolc dev, where an edit may bring
	// some), and answers its methods with what there is.
	declaredSkills bool
	log            *slog.Logger
	// dir is the directory that the services' directories are relative
	// to: files beside a contract are read from there.
	dir string

	mu     sync.Mutex
	served map[string]string // "p:" name, "r:" uri, "t:" template → fingerprint
	idx    atomic.Pointer[entryIndex]
}

type entryIndex struct {
	prompts   map[string]*servedPrompt
	resources map[string]*servedResource // by URI
	templates []*servedResource
	skills    []*servedSkill
}

type servedPrompt struct {
	svc  *catalog.Service
	p    *catalog.Prompt
	args *validate.Validator
}

type servedResource struct {
	svc  *catalog.Service
	r    *catalog.Resource
	tmpl *uritemplate.Template
	vars *validate.Validator
}

func newEntries(rt *runtime.Runtime, ask *asker, dir string) *entries {
	e := &entries{rt: rt, ask: ask, dir: dir, pageSize: mcp.DefaultPageSize, served: map[string]string{}, log: slog.New(slog.DiscardHandler)}
	e.idx.Store(&entryIndex{prompts: map[string]*servedPrompt{}, resources: map[string]*servedResource{}})
	return e
}

// index builds the lookup tables of a catalog. A prompt or resource that
// does not compile (which toolc check has refused already) is left out.
func (e *entries) index(cat *catalog.Catalog) *entryIndex {
	idx := &entryIndex{prompts: map[string]*servedPrompt{}, resources: map[string]*servedResource{}}
	for _, s := range cat.Services {
		for _, p := range s.Prompts {
			v, err := validate.NewValidator(&catalog.Message{Fields: p.Arguments}, validate.Naming("the prompt's arguments", "are"))
			if err != nil {
				continue
			}
			idx.prompts[p.Name] = &servedPrompt{s, p, v}
		}
		for _, r := range s.Resources {
			sr := &servedResource{svc: s, r: r}
			if !r.IsTemplate() {
				idx.resources[r.URI] = sr
				continue
			}
			t, err := uritemplate.New(r.URITemplate)
			if err != nil {
				continue
			}
			v, err := validate.NewValidator(&catalog.Message{Fields: r.Variables}, validate.Naming("the URI's variables", "are"))
			if err != nil {
				continue
			}
			sr.tmpl, sr.vars = t, v
			idx.templates = append(idx.templates, sr)
		}
		for _, sk := range s.Skills {
			idx.skills = append(idx.skills, &servedSkill{svc: s, sk: sk})
		}
	}
	// In the order of their URIs, which skills/list pages by (skill names
	// are unique across a catalog, and so are the URIs).
	slices.SortFunc(idx.skills, func(a, b *servedSkill) int { return cmp.Compare(a.sk.URI(), b.sk.URI()) })
	return idx
}

func fingerprint(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// sync follows a swap: it adds what is new or changed, removes what is
// gone, and tells subscribers of a resource whose content changed.
func (e *entries) sync(snap *runtime.Snapshot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	idx := e.index(snap.Catalog)
	e.idx.Store(idx)
	next := map[string]string{}
	for name, sp := range idx.prompts {
		next["p:"+name] = fingerprint(struct {
			P   *catalog.Prompt
			Dir string
		}{sp.p, sp.svc.Dir})
	}
	for uri, sr := range idx.resources {
		next["r:"+uri] = fingerprint(struct {
			R       *catalog.Resource
			Dir     string
			Content string
		}{sr.r, sr.svc.Dir, e.fileDigest(sr)})
	}
	for _, sr := range idx.templates {
		next["t:"+sr.r.URITemplate] = fingerprint(struct {
			R   *catalog.Resource
			Dir string
		}{sr.r, sr.svc.Dir})
	}
	// A skill's SKILL.md is among the resources, named and described by
	// its frontmatter, which is read here; its fingerprint covers every
	// file's digest, so that an edit tells the SKILL.md's subscribers.
	manifests := map[string]*mcp.Resource{}
	for _, ss := range idx.skills {
		sk, err := e.readSkill(ss)
		if err != nil {
			e.logf("skill %s is not served: %v", ss.sk.Name, err)
			continue
		}
		res := skillManifestResource(ss, sk)
		manifests[res.URI] = res
		next["t:"+skillFilesTemplate(ss.sk).URITemplate] = "skill"
		next["r:"+res.URI] = fingerprint(struct {
			R     *mcp.Resource
			Entry skillEntry
		}{res, entryOf(ss, sk)})
	}
	var prompts, resources, templates []string
	for key := range e.served {
		if _, ok := next[key]; ok {
			continue
		}
		kind, id, _ := strings.Cut(key, ":")
		switch kind {
		case "p":
			prompts = append(prompts, id)
		case "r":
			resources = append(resources, id)
		case "t":
			templates = append(templates, id)
		}
	}
	if len(prompts) > 0 {
		e.srv.RemovePrompts(prompts...)
	}
	if len(resources) > 0 {
		e.srv.RemoveResources(resources...)
	}
	if len(templates) > 0 {
		e.srv.RemoveResourceTemplates(templates...)
	}
	var updated []string
	for _, p := range snap.Catalog.MCPPrompts() {
		if fp := next["p:"+p.Name]; fp != e.served["p:"+p.Name] {
			e.srv.AddPrompt(toMCPPrompt(p), e.getPrompt)
		}
	}
	for _, r := range snap.Catalog.MCPResources() {
		key := "r:" + r.URI
		if fp := next[key]; fp != e.served[key] {
			if _, had := e.served[key]; had {
				updated = append(updated, r.URI)
			}
			e.srv.AddResource(&mcp.Resource{Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, URI: r.URI}, e.read)
		}
	}
	for _, ss := range idx.skills {
		res := manifests[ss.sk.URI()]
		key := "r:" + ss.sk.URI()
		if res == nil || next[key] == e.served[key] {
			continue
		}
		if _, had := e.served[key]; had {
			updated = append(updated, res.URI)
		}
		e.srv.AddResource(res, e.readSkillResource)
	}
	for _, ss := range idx.skills {
		t := skillFilesTemplate(ss.sk)
		if _, had := e.served["t:"+t.URITemplate]; !had {
			e.srv.AddResourceTemplate(t, e.readSkillResource)
		}
	}
	for _, r := range snap.Catalog.MCPResourceTemplates() {
		key := "t:" + r.URITemplate
		if _, ok := next[key]; ok && next[key] != e.served[key] {
			e.srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, URITemplate: r.URITemplate}, e.read)
		}
	}
	e.served = next
	for _, uri := range updated {
		e.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

func toMCPPrompt(p catalog.MCPPrompt) *mcp.Prompt {
	out := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		out.Arguments = append(out.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return out
}

// fileDigest is the digest of the file a resource serves, as it is now,
// or why it cannot be read, so that a swap after an edit of the file (toolc
// dev reloads on one) tells the resource's subscribers; "" for a resource
// without a file.
func (e *entries) fileDigest(sr *servedResource) string {
	if sr.r.File == "" {
		return ""
	}
	data, err := e.readFile(sr.svc, sr.r.File)
	if err != nil {
		return err.Error()
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// has reports whether the index serves prompts, and resources or
// templates: a server without them answers their methods "method not
// found", as its capabilities say.
func (e *entries) has() (prompts, resources bool) {
	idx := e.idx.Load()
	return len(idx.prompts) > 0, len(idx.resources)+len(idx.templates)+len(idx.skills) > 0
}

// hasSkills reports whether the index serves skills, and so declares the
// Skills extension.
func (e *entries) hasSkills() bool { return len(e.idx.Load().skills) > 0 }

func (e *entries) logf(format string, args ...any) { e.log.Warn(fmt.Sprintf(format, args...)) }

// hasTemplates reports whether the index serves resource templates,
// whose variables completion/complete may complete.
func (e *entries) hasTemplates() bool { return len(e.idx.Load().templates) > 0 }

// allows reports whether an OAuth caller (nil without OAuth) may see and
// use a prompt or resource that needs the scopes.
func allows(c *oauth.Caller, scopes []string) bool {
	return c == nil || len(c.Missing(scopes)) == 0
}

func unknownPrompt(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %s", runtime.QuoteName(name))}
}

// getPrompt serves prompts/get of a template prompt: the arguments held to
// the contract (declared names only, required ones present, each within
// its enum, pattern and bounds, defaults applied), then the messages with
// each {{name}} replaced.
func (e *entries) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	sp := e.idx.Load().prompts[req.Params.Name]
	if sp == nil || !allows(callerOf(req), sp.p.Scopes) {
		return nil, unknownPrompt(req.Params.Name)
	}
	args := req.Params.Arguments
	if args == nil {
		args = map[string]string{}
	}
	raw, _ := json.Marshal(args)
	checked, err := sp.args.Validate(raw)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %q: %v", sp.p.Name, err)}
	}
	var vals map[string]string
	if err := json.Unmarshal(checked, &vals); err != nil {
		return nil, fmt.Errorf("prompt %q: %v", sp.p.Name, err)
	}
	res := &mcp.GetPromptResult{Description: sp.p.Description, Messages: []*mcp.PromptMessage{}}
	if sp.p.Messages == nil {
		// A prompt's handler may ask the client, as a tool's may: the
		// same rounds under a requestState (bound to the prompt, so that
		// no tool's state resumes it), or the same relay over a legacy
		// session.
		handler := plugins.PromptPrefix + sp.p.Name
		x := newExchange(ctx, req, "prompt", handler, raw, req.Params.RequestState, req.Params.InputResponses)
		settled, err := e.ask.settle(ctx, x, func(ctx context.Context, in *plugins.Input) (*runtime.Result, error) {
			return e.runHandler(plugins.WithInput(ctx, in), req, sp.svc, handler, checked)
		})
		if err != nil {
			return nil, err
		}
		out := settled.res
		switch {
		case out == nil:
			return &mcp.GetPromptResult{InputRequests: settled.questions, RequestState: settled.state}, nil
		case out.IsError:
			return nil, handlerFailed(handler, out)
		}
		for _, c := range out.Content {
			role := c.Role
			if role != "user" && role != "assistant" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %q: the handler returned a message of role %q; a message's role is \"user\" or \"assistant\"", sp.p.Name, role)}
			}
			res.Messages = append(res.Messages, &mcp.PromptMessage{Role: mcp.Role(role), Content: ToContent([]plugins.Content{c})[0]})
		}
		return res, nil
	}
	for _, m := range sp.p.Messages {
		c, err := e.messageContent(sp.svc, m, vals)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %q: %v", sp.p.Name, err)}
		}
		res.Messages = append(res.Messages, &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: c})
	}
	return res, nil
}

func (e *entries) messageContent(svc *catalog.Service, m *catalog.PromptMessage, vals map[string]string) (mcp.Content, error) {
	switch m.Type {
	case "image", "audio":
		data, err := e.readFile(svc, m.File)
		if err != nil {
			return nil, err
		}
		if m.Type == "audio" {
			return &mcp.AudioContent{Data: data, MIMEType: m.MIMEType}, nil
		}
		return &mcp.ImageContent{Data: data, MIMEType: m.MIMEType}, nil
	case "resource":
		rc := &mcp.ResourceContents{URI: catalog.Substitute(m.URI, vals, false), MIMEType: m.MIMEType}
		if m.File == "" {
			rc.Text = catalog.Substitute(m.Text, vals, isJSON(m.MIMEType))
		} else if err := e.fill(rc, svc, m.File); err != nil {
			return nil, err
		}
		return &mcp.EmbeddedResource{Resource: rc}, nil
	}
	return &mcp.TextContent{Text: catalog.Substitute(m.Text, vals, false)}, nil
}

func isJSON(mimeType string) bool {
	t, _, _ := strings.Cut(mimeType, ";")
	t = strings.TrimSpace(t)
	return t == "application/json" || strings.HasSuffix(t, "+json")
}

// readFile reads a file beside a service's contract.
func (e *entries) readFile(svc *catalog.Service, name string) ([]byte, error) {
	return contentfile.Read(filepath.Join(e.dir, filepath.FromSlash(svc.Dir)), name)
}

// fill sets a resource's content from a file: text for a text MIME type,
// which must then be UTF-8, else a blob.
func (e *entries) fill(rc *mcp.ResourceContents, svc *catalog.Service, name string) error {
	data, err := e.readFile(svc, name)
	if err != nil {
		return err
	}
	if !contentfile.IsText(rc.MIMEType) {
		rc.Blob = data
		return nil
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("file %s is not UTF-8 text, as its MIME type %s says", name, rc.MIMEType)
	}
	rc.Text = string(data)
	return nil
}

// lookup finds the resource of a URI: one with that URI, else the first
// template that matches it, with the values of its variables.
func (idx *entryIndex) lookup(uri string) (*servedResource, uritemplate.Values) {
	if sr := idx.resources[uri]; sr != nil {
		return sr, nil
	}
	for _, sr := range idx.templates {
		if m := sr.tmpl.Match(uri); m != nil {
			return sr, m
		}
	}
	return nil, nil
}

// maxURI bounds the URI of a resources/read or a subscription. Matching a
// URI against a template (the uritemplate library go-sdk matches with)
// costs about 2 µs a byte: a 4 MiB URI, which a request may carry, held a
// core for 17 s. No resource's URI comes near the bound; a path that a
// {+path} carries is at most 4 KiB on Linux.
const maxURI = 8 << 10

// checkURILength refuses a URI over maxURI: invalid params (-32602), as
// "Resource not found" is, with the reason.
func checkURILength(uri string) error {
	if len(uri) <= maxURI {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Resource not found: the URI %s is %d bytes, over the %d that a resource's URI may have", quoteURI(uri), len(uri), maxURI)}
}

// handled says whether a handler reads uri: its contents change when the
// handler's data does, with no notifications/resources/updated.
func (e *entries) handled(uri string) bool {
	sr, _ := e.idx.Load().lookup(uri)
	return sr != nil && !sr.r.Static()
}

// read serves resources/read of a static resource or template: a URI that
// no resource has, or that no template matches, is "Resource not found"
// (-32602, SEP-2164); a template's variables are held to their fields.
func (e *entries) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	sr, m := e.idx.Load().lookup(uri)
	if sr == nil || !allows(callerOf(req), sr.r.Scopes) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	vals := map[string]string{}
	if sr.tmpl != nil {
		for _, name := range sr.tmpl.Varnames() {
			vals[name] = m.Get(name).String()
		}
		raw, _ := json.Marshal(vals)
		if _, err := sr.vars.Validate(raw); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resource %q: %v", sr.r.Name, err), Data: json.RawMessage(fmt.Sprintf(`{"uri":%q}`, uri))}
		}
	}
	if !sr.r.Static() {
		return e.readHandled(ctx, req, sr, vals)
	}
	rc := &mcp.ResourceContents{URI: uri, MIMEType: sr.r.MIMEType}
	if sr.r.File != "" {
		if err := e.fill(rc, sr.svc, sr.r.File); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("resource %q: %v", sr.r.Name, err)}
		}
	} else {
		rc.Text = catalog.Substitute(sr.r.Text, vals, isJSON(sr.r.MIMEType))
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
}

// runHandler runs the handler of a prompt or resource once, for the
// caller of req, and audits the run for an OAuth caller.
func (e *entries) runHandler(ctx context.Context, req mcp.Request, svc *catalog.Service, handler string, args json.RawMessage) (*runtime.Result, error) {
	c := callerOf(req)
	if c != nil {
		ctx = oauth.WithCaller(ctx, c)
	}
	start := time.Now()
	res, err := e.rt.CallEntry(ctx, svc.Name, handler, args, nil)
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "error"
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: %v", handler, err)}
	case len(res.InputRequests) > 0:
		outcome = "input_required"
	case res.IsError:
		outcome = "tool_error"
	}
	e.rt.Audit(c, handler, outcome, time.Since(start), args)
	return res, err
}

// handlerFailed is the JSON-RPC error of a prompt or resource whose
// handler returned an error.
func handlerFailed(handler string, res *runtime.Result) error {
	var text []string
	for _, c := range res.Content {
		text = append(text, c.Text)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s failed: %s", handler, strings.Join(text, " "))}
}

// readHandled reads a resource from its handler, and holds what it returns
// to the contract: embedded resources only, of the declared MIME type
// (filled in where the handler left it out), text for a text type, each
// within the size bound of a file.
func (e *entries) readHandled(ctx context.Context, req *mcp.ReadResourceRequest, sr *servedResource, vals map[string]string) (*mcp.ReadResourceResult, error) {
	handler := plugins.ResourcePrefix + sr.r.Name
	res, err := e.runHandler(ctx, req, sr.svc, handler, plugins.ResourceCall(req.Params.URI, vals))
	switch {
	case err != nil:
		return nil, err
	case len(res.InputRequests) > 0 || res.MissingCapability != "":
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s asked the client something; a resource's handler cannot", handler)}
	case res.IsError:
		return nil, handlerFailed(handler, res)
	}
	bad := func(format string, args ...any) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("resource %q: the handler returned ", sr.r.Name) + fmt.Sprintf(format, args...)}
	}
	out := &mcp.ReadResourceResult{}
	for i, c := range res.Content {
		rc := c.Resource
		if c.Type != "resource" || rc == nil {
			return nil, bad("content %d of type %q; a resource's contents are embedded resources (plugins.ResourceContents)", i+1, c.Type)
		}
		mt := rc.MIMEType
		switch {
		case mt == "":
			mt = sr.r.MIMEType
		case sr.r.MIMEType != "" && mt != sr.r.MIMEType:
			return nil, bad("%s, and the contract says %s", mt, sr.r.MIMEType)
		}
		if contentfile.IsText(mt) && rc.Blob != nil {
			return nil, bad("binary content for the text type %s", mt)
		}
		if n := len(rc.Text) + len(rc.Blob); n > contentfile.MaxSize {
			return nil, bad("%d bytes, over the %d MiB of a resource", n, contentfile.MaxSize>>20)
		}
		out.Contents = append(out.Contents, &mcp.ResourceContents{URI: cmp.Or(rc.URI, req.Params.URI), MIMEType: mt, Text: rc.Text, Blob: rc.Blob})
	}
	return out, nil
}

// maxCompletions is the most values completion/complete returns, as MCP
// bounds them.
const maxCompletions = 100

// complete answers completion/complete from the contract: the enum values
// of a prompt's argument or a template's variable (or, without an enum,
// its examples) that start with what the user typed, case aside.
func (e *entries) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	idx := e.idx.Load()
	ref, arg := req.Params.Ref, req.Params.Argument
	c := callerOf(req)
	var f *catalog.Field
	switch ref.Type {
	case "ref/prompt":
		sp := idx.prompts[ref.Name]
		if sp == nil || !allows(c, sp.p.Scopes) {
			return nil, unknownPrompt(ref.Name)
		}
		if f = sp.p.Argument(arg.Name); f == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %q has no argument %s", sp.p.Name, runtime.QuoteName(arg.Name))}
		}
	case "ref/resource":
		i := slices.IndexFunc(idx.templates, func(sr *servedResource) bool { return sr.r.URITemplate == ref.URI })
		if i < 0 || !allows(c, idx.templates[i].r.Scopes) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no resource template %s", runtime.QuoteName(ref.URI))}
		}
		r := idx.templates[i].r
		if f = r.Variable(arg.Name); f == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resource template %q has no variable %s", r.URITemplate, runtime.QuoteName(arg.Name))}
		}
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown reference type %s", runtime.QuoteName(ref.Type))}
	}
	values := []string{}
	prefix := strings.ToLower(arg.Value)
	// The enum, which holds every value; else the examples, which
	// suggest some.
	suggest := f.Enum
	if suggest == nil {
		suggest = f.Examples
	}
	for _, v := range suggest {
		if s, ok := v.(string); ok && strings.HasPrefix(strings.ToLower(s), prefix) {
			values = append(values, s)
		}
	}
	total := len(values)
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{
		Values: values[:min(total, maxCompletions)], Total: total, HasMore: total > maxCompletions,
	}}, nil
}

// subscribe accepts a subscription to a URI that a resource has or a
// template matches; go-sdk keeps the subscribers, and sync tells them when
// a reload changes the resource.
func (e *entries) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	idx := e.idx.Load()
	if _, _, ok := idx.skillOf(req.Params.URI); ok {
		return nil // a skill's file; its SKILL.md is told of every edit of the skill
	}
	if sr, _ := idx.lookup(req.Params.URI); sr == nil || !allows(callerOf(req), sr.r.Scopes) {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return nil
}

func (e *entries) unsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }

// notifiable reports whether a reload may tell the subscribers of uri:
// a resource's own URI, or a skill's SKILL.md. A template's URI, or a
// file of a skill, is never told (a handler's data changes with no
// notice; a skill's SKILL.md is told of every edit of the skill).
func (idx *entryIndex) notifiable(uri string) bool {
	if idx.resources[uri] != nil {
		return true
	}
	ss, file, ok := idx.skillOf(uri)
	return ok && ss.sk.Root()+"/"+file == ss.sk.URI()
}

// keepSubscriptions is MCP middleware that keeps go-sdk's table of
// subscribers to the URIs that sync may tell of, of which the catalog
// has a fixed number. go-sdk keeps every URI that a subscribe accepts,
// and keeps the URI even after its session ends, so subscriptions to
// the URIs a template matches (any number of them, each as long as a
// request) grew the server's memory without bound: 2,000 subscriptions
// of 8 KiB URIs held 16 MiB after their session closed. Such a
// subscription is accepted (the URI exists) and not kept, as nothing
// would be sent to it. A 2026-07-28 subscriptions/listen names its URIs
// in one request: they are deduplicated, and the server agrees (in its
// acknowledgement) only to those it can tell of.
func (e *entries) keepSubscriptions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.SubscribeRequest:
			if r.Params != nil && !e.idx.Load().notifiable(r.Params.URI) {
				if err := e.subscribe(ctx, r); err != nil {
					return nil, err
				}
				return &mcp.ResultBase{}, nil
			}
		case *mcp.SubscriptionsListenRequest:
			if r.Params == nil || r.Params.Notifications == nil || len(r.Params.Notifications.ResourceSubscriptions) == 0 {
				break
			}
			idx := e.idx.Load()
			n := *r.Params.Notifications
			n.ResourceSubscriptions = nil
			seen := map[string]bool{}
			for _, uri := range r.Params.Notifications.ResourceSubscriptions {
				if seen[uri] {
					continue
				}
				if err := checkURILength(uri); err != nil {
					return nil, err
				}
				seen[uri] = true
				if idx.notifiable(uri) {
					n.ResourceSubscriptions = append(n.ResourceSubscriptions, uri)
					continue
				}
				// Not kept; still, a URI the server does not serve is
				// "Resource not found", as go-sdk's subscribe answers.
				if err := e.subscribe(ctx, &mcp.SubscribeRequest{Session: r.Session, Extra: r.Extra, Params: &mcp.SubscribeParams{URI: uri}}); err != nil {
					return nil, err
				}
			}
			p := *r.Params
			p.Notifications = &n
			r.Params = &p
		}
		return next(ctx, method, req)
	}
}

// filterLists is MCP middleware for OAuth callers: the prompt and
// resource lists hold only what the caller's token may see.
func (e *entries) filterLists(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c := callerOf(req)
		res, err := next(ctx, method, req)
		if c == nil || err != nil {
			return res, err
		}
		idx := e.idx.Load()
		switch list := res.(type) {
		case *mcp.ListPromptsResult:
			out := *list
			out.Prompts = slices.DeleteFunc(slices.Clone(list.Prompts), func(p *mcp.Prompt) bool {
				sp := idx.prompts[p.Name]
				return sp == nil || !allows(c, sp.p.Scopes)
			})
			return &out, nil
		case *mcp.ListResourcesResult:
			out := *list
			out.Resources = slices.DeleteFunc(slices.Clone(list.Resources), func(r *mcp.Resource) bool {
				if ss, _, ok := idx.skillOf(r.URI); ok { // a skill's SKILL.md
					return !allows(c, ss.svc.Scopes)
				}
				sr := idx.resources[r.URI]
				return sr == nil || !allows(c, sr.r.Scopes)
			})
			return &out, nil
		case *mcp.ListResourceTemplatesResult:
			out := *list
			out.ResourceTemplates = slices.DeleteFunc(slices.Clone(list.ResourceTemplates), func(t *mcp.ResourceTemplate) bool {
				if ss, _, ok := idx.skillOf(strings.TrimSuffix(t.URITemplate, "/{+path}")); ok { // a skill's files
					return !allows(c, ss.svc.Scopes)
				}
				i := slices.IndexFunc(idx.templates, func(sr *servedResource) bool { return sr.r.URITemplate == t.URITemplate })
				return i < 0 || !allows(c, idx.templates[i].r.Scopes)
			})
			return &out, nil
		}
		return res, err
	}
}
