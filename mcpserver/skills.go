package mcpserver

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/contentfile"
	"github.com/toolc/toolc/internal/skilldir"
	"github.com/toolc/toolc/oauth"
)

// The Skills extension (SEP-2640): each skill of the catalog is a
// directory whose files are resources under skill://NAME/, its SKILL.md
// listed among the resources; skills/list and skills/get give each
// skill's frontmatter and every file's digest and size; and
// resources/directory/read lists a directory of a skill. The files are
// read when they are served, through skilldir, so that a digest a client
// is given is of the bytes it reads.
const (
	skillsExtension  = "io.modelcontextprotocol/skills"
	directoryMIME    = "inode/directory"
	methodListSkills = "skills/list"
	methodGetSkill   = "skills/get"
	methodReadDir    = "resources/directory/read"
)

type servedSkill struct {
	svc *catalog.Service
	sk  *catalog.Skill
}

type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	mcp.ResultBase
	ResultType string       `json:"resultType"`
	Skills     []skillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
	TTLMs      int          `json:"ttlMs"`
	CacheScope string       `json:"cacheScope"`
}

type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getSkillResult struct {
	mcp.ResultBase
	ResultType string     `json:"resultType"`
	Skill      skillEntry `json:"skill"`
	TTLMs      int        `json:"ttlMs"`
	CacheScope string     `json:"cacheScope"`
}

type readDirParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type readDirResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
}

// registerSkills adds the extension's methods to srv. Each answers
// "method not found" while the catalog serves no skill, as the
// capability, which follows the catalog, then does not declare it
// (unless Options.Declared says it does).
func (e *entries) registerSkills(srv *mcp.Server) {
	_ = mcp.AddReceivingCustomMethod(srv, methodListSkills, e.listSkills)
	_ = mcp.AddReceivingCustomMethod(srv, methodGetSkill, e.getSkill)
	_ = mcp.AddReceivingCustomMethod(srv, methodReadDir, e.readDir)
}

func noSkills(method string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found: this server serves no skills", method)}
}

// readSkill reads a served skill's directory as it is now.
func (e *entries) readSkill(ss *servedSkill) (*skilldir.Skill, error) {
	return skilldir.Read(filepath.Join(e.dir, filepath.FromSlash(ss.svc.Dir)), ss.sk.Dir)
}

// listSkill lists a served skill's files as they are now, without reading
// them: a read of one file, or of a directory, should not cost reading and
// digesting the whole skill (up to 16 MiB for each small request).
func (e *entries) listSkill(ss *servedSkill) ([]skilldir.File, error) {
	return skilldir.List(filepath.Join(e.dir, filepath.FromSlash(ss.svc.Dir)), ss.sk.Dir)
}

// entryOf is a skill's entry of skills/list and skills/get.
func entryOf(ss *servedSkill, sk *skilldir.Skill) skillEntry {
	out := skillEntry{URI: ss.sk.URI(), Frontmatter: sk.Frontmatter, Resources: make([]skillResource, 0, len(sk.Files))}
	for _, f := range sk.Files {
		out.Resources = append(out.Resources, skillResource{URI: ss.sk.Root() + "/" + f.Path, Digest: f.Digest, Size: f.Size})
	}
	return out
}

// A skill is its service's: an OAuth caller sees and reads it only with
// the service's auth.scopes, as it sees the service's tools, and one
// without them is answered as for a skill that does not exist. The
// extension's methods are go-sdk custom methods, whose handlers get no
// request, so withCaller passes the caller in their context.
type callerKey struct{}

// withCaller is MCP middleware that puts an OAuth caller in the context of
// the extension's methods (see callerKey).
func withCaller(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if c := callerOf(req); c != nil && (method == methodListSkills || method == methodGetSkill || method == methodReadDir) {
			ctx = context.WithValue(ctx, callerKey{}, c)
		}
		return next(ctx, method, req)
	}
}

// mayRead reports whether the caller of ctx (none without OAuth) may see
// and read the served skill.
func mayRead(ctx context.Context, ss *servedSkill) bool {
	c, _ := ctx.Value(callerKey{}).(*oauth.Caller)
	return allows(c, ss.svc.Scopes)
}

// skillsCursor begins every skills/list cursor, so that a cursor of
// another list, or any other string, is refused rather than read as a
// URI.
const skillsCursor = "toolc skills/list after "

// maxCursor bounds the cursor that skills/list decodes: one of its own
// holds a skill's URI, whose name is at most 64 bytes.
const maxCursor = 512

// skillCursor is the opaque cursor of the page that follows the skill
// whose SKILL.md has the URI uri.
func skillCursor(uri string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(skillsCursor + uri))
}

// afterCursor is the URI that cursor continues after, if it is a cursor
// skillCursor made.
func afterCursor(cursor string) (string, bool) {
	if len(cursor) > maxCursor {
		return "", false
	}
	data, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", false
	}
	uri, ok := strings.CutPrefix(string(data), skillsCursor)
	return uri, ok && strings.HasPrefix(uri, catalog.SkillScheme)
}

// listSkills answers skills/list a page at a time, as go-sdk pages the
// other lists: at most pageSize skills in the order of their URIs, and a
// nextCursor while more may follow. The cursor names the last skill
// that a page looked at, not a position, so that a reload between two
// pages (a skill added or removed) neither repeats nor skips another;
// and a page reads, and digests, only its own skills' files.
func (e *entries) listSkills(ctx context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	idx := e.idx.Load()
	if len(idx.skills) == 0 && !e.declaredSkills {
		return nil, noSkills(methodListSkills)
	}
	start := 0
	if p != nil && p.Cursor != "" {
		after, ok := afterCursor(p.Cursor)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: pass the nextCursor of a skills/list result as it was, or none for the first page"}
		}
		var found bool
		start, found = slices.BinarySearchFunc(idx.skills, after, func(ss *servedSkill, uri string) int { return cmp.Compare(ss.sk.URI(), uri) })
		if found {
			start++
		}
	}
	out := &listSkillsResult{ResultType: "complete", Skills: []skillEntry{}, TTLMs: e.ttl, CacheScope: "public"}
	if _, ok := ctx.Value(callerKey{}).(*oauth.Caller); ok {
		out.CacheScope = "private" // the caller's own list, as for tools
	}
	looked := 0
	for i, ss := range idx.skills[start:] {
		if !mayRead(ctx, ss) {
			continue
		}
		if looked == e.pageSize {
			// ss is visible and not on this page: another page follows,
			// after the skill before ss.
			out.NextCursor = skillCursor(idx.skills[start+i-1].sk.URI())
			break
		}
		looked++
		sk, err := e.readSkill(ss)
		if err != nil {
			// A listing may be partial; skills/get of it says why.
			e.logf("skill %s is not served: %v", ss.sk.Name, err)
			continue
		}
		out.Skills = append(out.Skills, entryOf(ss, sk))
	}
	return out, nil
}

func (e *entries) getSkill(ctx context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	idx := e.idx.Load()
	if len(idx.skills) == 0 && !e.declaredSkills {
		return nil, noSkills(methodGetSkill)
	}
	i := slices.IndexFunc(idx.skills, func(ss *servedSkill) bool { return ss.sk.URI() == p.URI && mayRead(ctx, ss) })
	if i < 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no skill is served at %s", quoteURI(p.URI))}
	}
	sk, err := e.readSkill(idx.skills[i])
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("skill %s: %v", idx.skills[i].sk.Name, err)}
	}
	return &getSkillResult{ResultType: "complete", Skill: entryOf(idx.skills[i], sk), TTLMs: e.ttl, CacheScope: "public"}, nil
}

// skillOf finds the served skill whose namespace holds uri, and the path
// of uri below the skill's root ("" for the root itself).
func (idx *entryIndex) skillOf(uri string) (*servedSkill, string, bool) {
	for _, ss := range idx.skills {
		root := ss.sk.Root()
		if uri == root {
			return ss, "", true
		}
		if rest, ok := strings.CutPrefix(uri, root+"/"); ok {
			return ss, rest, true
		}
	}
	return nil, "", false
}

func (e *entries) readDir(ctx context.Context, _ *mcp.ServerSession, p *readDirParams) (*readDirResult, error) {
	idx := e.idx.Load()
	if len(idx.skills) == 0 && !e.declaredSkills {
		return nil, noSkills(methodReadDir)
	}
	if p.Cursor != "" {
		// One page holds any directory: a skill has at most
		// skilldir.MaxFiles files. A cursor is then none the server made.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor: this server answers a directory in one page (a skill holds at most %d files) and makes no cursor; send none", skilldir.MaxFiles)}
	}
	notDir := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s is not a directory resource of this server", quoteURI(p.URI))}
	ss, dir, ok := idx.skillOf(strings.TrimSuffix(p.URI, "/"))
	if !ok || !mayRead(ctx, ss) {
		return nil, notDir
	}
	files, err := e.listSkill(ss)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("skill %s: %v", ss.sk.Name, err)}
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	out := &readDirResult{ResultType: "complete", Resources: []*mcp.Resource{}}
	seen := map[string]bool{}
	found := dir == ""
	for _, f := range files {
		rest, ok := strings.CutPrefix(f.Path, prefix)
		if !ok {
			continue
		}
		found = true
		child, _, isDir := strings.Cut(rest, "/")
		if seen[child] {
			continue
		}
		seen[child] = true
		r := &mcp.Resource{URI: ss.sk.Root() + "/" + prefix + child, Name: child, MIMEType: fileMIME(child)}
		if isDir {
			r.MIMEType = directoryMIME
		} else {
			r.Size = f.Size
		}
		out.Resources = append(out.Resources, r)
	}
	if !found {
		return nil, notDir
	}
	return out, nil
}

// fileMIME is the MIME type a skill's file is served as: by its
// extension, or application/octet-stream.
func fileMIME(name string) string {
	if mt := contentfile.MIMEType(name); mt != "" {
		return mt
	}
	return "application/octet-stream"
}

// readSkillFile serves resources/read of a file of a skill: the bytes the
// skill's entry describes, text for a text type (which is then UTF-8),
// else a blob.
func (e *entries) readSkillFile(ss *servedSkill, uri, file string) (*mcp.ReadResourceResult, error) {
	notFound := mcp.ResourceNotFoundError(uri)
	files, err := e.listSkill(ss)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("skill %s: %v", ss.sk.Name, err)}
	}
	// Only a file the skill's entry lists: what skills/get would describe.
	if !slices.ContainsFunc(files, func(f skilldir.File) bool { return f.Path == file }) {
		return nil, notFound
	}
	data, err := contentfile.Read(filepath.Join(e.dir, filepath.FromSlash(ss.svc.Dir)), path.Join(ss.sk.Dir, file))
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("skill %s: %v", ss.sk.Name, err)}
	}
	rc := &mcp.ResourceContents{URI: uri, MIMEType: fileMIME(file)}
	if contentfile.IsText(rc.MIMEType) && utf8.Valid(data) {
		rc.Text = string(data)
	} else {
		rc.Blob = data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
}

// skillFilesTemplate is the resource template of a skill's files, by
// which go-sdk routes their reads to readSkillFile; the SKILL.md is a
// resource of its own, listed.
func skillFilesTemplate(sk *catalog.Skill) *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{URITemplate: sk.Root() + "/{+path}", Name: sk.Name + " files", Description: "The files of skill " + sk.Name + " (see skills/get)"}
}

// readSkillResource is the read handler of skills' resources.
func (e *entries) readSkillResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if ss, file, ok := e.idx.Load().skillOf(req.Params.URI); ok && allows(callerOf(req), ss.svc.Scopes) {
		return e.readSkillFile(ss, req.Params.URI, file)
	}
	return nil, mcp.ResourceNotFoundError(req.Params.URI)
}

// skillManifestResource is the resource of a skill's SKILL.md in
// resources/list: its name and description are the frontmatter's.
func skillManifestResource(ss *servedSkill, sk *skilldir.Skill) *mcp.Resource {
	return &mcp.Resource{URI: ss.sk.URI(), Name: sk.Name, Description: sk.Description, MIMEType: "text/markdown"}
}

// quoteURI quotes a URI a client sent, bounded.
func quoteURI(uri string) string {
	if len(uri) > 200 {
		uri = uri[:200] + "..."
	}
	return fmt.Sprintf("%q", strings.ToValidUTF8(uri, "\uFFFD"))
}
