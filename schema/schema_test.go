package schema_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/schema"
)

// These tests hold contracts to the strict schema, schema.cue, the way
// `cue vet -c` does in CI without toolc, and compare its verdicts with
// toolc's compiler, which checks contracts with its own rules.

// newModule lays out a CUE module in a temporary directory as `toolc init`
// does: cue.mod/module.cue, and the embedded schema under cue.mod/pkg, where
// the import github.com/toolc/toolc/schema resolves to it offline. files
// maps slash-separated paths below the module root to their contents.
func newModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{
		"cue.mod/module.cue": "module: \"example.com/contracts@v0\"\nlanguage: version: \"v0.17.0\"\n",
		"cue.mod/pkg/" + schema.ImportPath + "/" + schema.FileName: schema.Source(),
	}
	for name, data := range files {
		all[name] = data
	}
	for name, data := range all {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// vet validates the package in dir, relative to the module root, against
// the strict schema with the options that `cue vet -c` uses. It fails the
// test if the package does not load: every case here must at least parse.
func vet(t *testing.T, root, dir string) error {
	t.Helper()
	insts := load.Instances([]string{"./" + dir}, &load.Config{
		Dir: root,
		Env: []string{"CUE_REGISTRY=none"},
	})
	if len(insts) != 1 {
		t.Fatalf("loading %s: got %d instances, want 1", dir, len(insts))
	}
	if err := insts[0].Err; err != nil {
		t.Fatalf("loading %s: %v", dir, cueerrors.Details(err, nil))
	}
	v := cuecontext.New().BuildInstance(insts[0])
	return v.Validate(
		cue.Attributes(true),
		cue.Definitions(true),
		cue.Hidden(true),
		cue.Concrete(true),
	)
}

// compile checks the package in dir, relative to root, with toolc's
// compiler and returns its error diagnostics.
func compile(t *testing.T, root, dir string) []diag.Diagnostic {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{Dir: root}, "./"+dir)
	if err != nil {
		t.Fatalf("compiling %s: %v", dir, err)
	}
	var errs []diag.Diagnostic
	for _, d := range res.Diagnostics {
		if d.Severity == diag.Error {
			errs = append(errs, d)
		}
	}
	return errs
}

// contract is a service with one tool, t, whose body is tool.
func contract(tool string) string {
	return service(`tools: t: {
		` + tool + `
	}`)
}

// field is a contract whose tool t takes one request field, x, with the
// given body.
func field(body string) string {
	return contract(`description: "A tool"
		request: fields: x: {` + body + `}`)
}

// service is a contract package whose service has the given keys besides
// name, version and description.
func service(keys string) string {
	return pkg(`name:        "svc"
	version:     "1.0.0"
	description: "A service"
	` + keys)
}

// pkg is a contract package whose service has exactly the given keys.
func pkg(keys string) string {
	return `package c

import "github.com/toolc/toolc/schema"

schema.#Service & {
	` + keys + `
}
`
}

// exampleDirs returns the example contract directories, relative to the
// repository root.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		matches, err := filepath.Glob(filepath.Join("..", "examples", e.Name(), "*.cue"))
		if err != nil {
			t.Fatal(err)
		}
		if len(matches) > 0 {
			dirs = append(dirs, "examples/"+e.Name())
		}
	}
	if len(dirs) < 3 {
		t.Fatalf("found %d example contracts (%v), want at least weather, issuetracker and filesearch", len(dirs), dirs)
	}
	return dirs
}

// TestExamples checks that the strict schema and the compiler agree on the
// examples: each passes both, with no error.
func TestExamples(t *testing.T) {
	for _, dir := range exampleDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			// The strict schema, on a copy in a module of its own, so that
			// the schema is the embedded one, exactly.
			files := map[string]string{}
			matches, _ := filepath.Glob(filepath.Join("..", filepath.FromSlash(dir), "*.cue"))
			for _, m := range matches {
				data, err := os.ReadFile(m)
				if err != nil {
					t.Fatal(err)
				}
				files[dir+"/"+filepath.Base(m)] = string(data)
			}
			if err := vet(t, newModule(t, files), dir); err != nil {
				t.Errorf("strict schema rejects %s:\n%s", dir, cueerrors.Details(err, nil))
			}
			// The compiler, in place.
			for _, d := range compile(t, "..", dir) {
				t.Errorf("compiler rejects %s: %s: %s [%s]", dir, d.Pos, d.Message, d.Rule)
			}
		})
	}
}

// TestGoodContracts checks small contracts that use the language at its
// edges, which the strict schema must not reject where toolc accepts them.
func TestGoodContracts(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
	}{
		{"no fields", map[string]string{"c.cue": contract(`description: "A tool"
			request: fields: {}`)}},
		{"every annotation and key", map[string]string{"c.cue": service(`handler: "./cmd/handler"
			mcp: title: "Service"
			auth: scopes: ["svc:read", "!#[]~"]
			tools: t: {
				auth: scopes: ["svc:write", "svc:read"]
				description: "A tool"
				title:       "T"
				deprecated:  false
				strict:      true
				task:        "required"
				annotations: {readOnly: true, destructive: false, idempotent: true, openWorld: false}
				mcp: name: "svc-T_1"
				request: {description: "Args", fields: {}}
				response: {description: "Result", fields: ok: {type: "boolean", description: "Done"}}
			}`)}},
		{"string with everything", map[string]string{"c.cue": field(`type: "string", description: "d", required: false,
			enum: ["a.b", "c|d", "x"], default: "a.b", minLength: 1, maxLength: 3, pattern: "^[a-z.|]+$", format: "hostname",
			examples: ["a.b", "x"], deprecated: true`)}},
		{"integer with everything", map[string]string{"c.cue": field(`type: "integer", description: "d", required: false,
			enum: [1, 2, 3], default: 2, minimum: 1, maximum: 3, exclusiveMinimum: 0, exclusiveMaximum: 4, examples: [1, 3]`)}},
		{"number with float bounds", map[string]string{"c.cue": field(`type: "number", description: "d", required: false,
			default: 0.5, minimum: 0, exclusiveMaximum: 1.5, examples: [0, 1, 1.25]`)}},
		{"boolean", map[string]string{"c.cue": field(`type: "boolean", description: "d", required: false, default: true, examples: [false]`)}},
		{"array with everything", map[string]string{"c.cue": field(`type: "array", items: "number", description: "d", required: false,
			default: [1, 2.5], minItems: 1, maxItems: 3, uniqueItems: true, examples: [[1], [1, 2, 3]]`)}},
		{"equal bounds", map[string]string{"c.cue": field(`type: "integer", description: "d", minimum: 3, maximum: 3`)}},
		{"multi-select of strings", map[string]string{"c.cue": field(`type: "array", items: "string", description: "d", required: false,
			enum: ["a.b", "c|d"], default: ["c|d"], uniqueItems: true, examples: [["a.b", "c|d"]]`)}},
		{"multi-select of integers", map[string]string{"c.cue": field(`type: "array", items: "integer", description: "d", required: false,
			enum: [1, 2, 3], default: [1, 3]`)}},
		{"lowerCamelCase fields and hyphenated tools", map[string]string{"c.cue": service(`tools: "get-sum": {
				description: "A tool"
				request: fields: {perPage: {type: "integer", description: "d"}, pullNumber: {type: "integer", description: "d"}}
			}
			tools: getSum: {description: "A tool", request: fields: {}}`)}},
		{"tool examples", map[string]string{"c.cue": contract(`description: "A tool"
			request: fields: {
				city: {type: "string", description: "d", enum: ["Berlin", "Paris"]}
				days: {type: "integer", description: "d", required: false, minimum: 1, maximum: 14}
				ratio: {type: "number", description: "d", required: false}
				hours: {type: "array", items: "integer", description: "d", required: false, maxItems: 2}
				tags: {type: "array", items: "string", description: "d", required: false}
			}
			examples: [{city: "Berlin"}, {city: "Paris", days: 14, ratio: 0.5, hours: [1, 2], tags: ["a"]}]`)}},
		{"schema definitions as values", map[string]string{"c.cue": contract(`description: schema.#Text & "A tool"
			request: fields: {
				a: {type: "string", description: "d", format: schema.#Format & "uuid"}
				b: {type: "array", description: "d", items: schema.#Scalar & "boolean"}
			}`)}},
		{"record with everything", map[string]string{"c.cue": contract(`description: "A tool"
			request: fields: edits: {type: "array", description: "Edits", minItems: 1, maxItems: 5, deprecated: false,
				items: fields: {
					oldText: {type: "string", description: "d", minLength: 1, pattern: "^[^\n]+$"}
					newText: {type: "string", description: "d"}
					count: {type: "integer", description: "d", required: false, default: 1, minimum: 1, enum: [1, 2, 3]}
					ratio: {type: "number", description: "d", required: false, exclusiveMinimum: 0}
					when: {type: "string", description: "d", required: false, format: "date-time"}
					ok: {type: "boolean", description: "d", required: false, default: true}
					lines: {type: "array", items: "integer", description: "d", required: false, uniqueItems: true, maxItems: 3}
					modes: {type: "array", items: "string", description: "d", required: false, enum: ["r", "w"]}
				}
				examples: [[{oldText: "a", newText: "b"}], [{oldText: "a", newText: "b", count: 2, lines: [1, 2], modes: ["r"]}]]
			}
			response: fields: done: {type: "array", description: "Applied", items: fields: {at: {type: "integer", description: "d"}}}
			examples: [{edits: [{oldText: "a", newText: "b"}, {oldText: "c", newText: "d", ratio: 0.5, when: "2030-01-01T00:00:00Z"}]}]`)}},
		{"text that only looks invisible", map[string]string{"c.cue": service(`mcp: title: "Arithmetic ⚠️ with care, 1️⃣ step at a time 👨‍👩‍👧 👁️‍🗨️, می‌خواهم\n\tindented"
			tools: t: {
				description: "A tool\r\n"
				title:       "Tool ✔️"
				request: fields: x: {type: "string", description: "d", enum: ["❤️", "#️⃣"], required: false, default: "❤️"}
			}`)}},
		{"free-form values", map[string]string{"c.cue": contract(`description: "A tool"
			request: fields: {
				filter: {type: "json", object: true, description: "d", examples: [{age: {"$gt": 30}}, {}]}
				patch: {type: "json", description: "d", required: false, deprecated: true, examples: [[{op: "add"}], "x", 1, true, null]}
				any: {type: "json", description: "d"}
				rows: {type: "array", description: "d", required: false, items: fields: meta: {type: "json", object: false, description: "d"}}
			}
			response: fields: doc: {type: "json", object: true, description: "d", required: false}
			examples: [{filter: {a: [1, {b: null}]}, any: null}, {filter: {}, patch: null, any: "s", rows: [{meta: [1]}]}]`)}},
		{"stdio upstream with everything", map[string]string{"c.cue": service(`upstream: {
				command: ["npx", "-y", "@acme/docs-mcp@1.4.0"]
				dir: "work"
				env: {DOCS_TOKEN: {env: "ACME_DOCS_TOKEN"}, CA_PEM: {file: "/run/secrets/ca.pem"}, AUTH: {env: "X", prefix: "Bearer "}}
				startTimeout: "10s"
				callTimeout: "1m30s"
				checkInterval: "5m"
			}
			tools: "get-doc": {description: "A tool", request: fields: {}, mcp: name: "getDoc"}`)}},
		{"http upstream with headers", map[string]string{"c.cue": service(`upstream: {
				url: "https://docs.internal:8443/mcp"
				headers: Authorization: {env: "DOCS_TOKEN", prefix: "Bearer "}
			}
			tools: t: {description: "A tool", request: fields: {}}`)}},
		{"service split over two files", map[string]string{
			"a.cue": contract(`description: "A tool"
				request: fields: {}`),
			"b.cue": "package c\n\ntools: u: {\n\tdescription: \"Another tool\"\n\trequest: fields: n: {type: \"integer\", description: \"d\"}\n\texamples: [{n: 1}]\n}\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			for name, data := range tt.files {
				files["c/"+name] = data
			}
			root := newModule(t, files)
			if err := vet(t, root, "c"); err != nil {
				t.Errorf("strict schema rejects it:\n%s", cueerrors.Details(err, nil))
			}
			for _, d := range compile(t, root, "c") {
				t.Errorf("compiler rejects it: %s: %s [%s]", d.Pos, d.Message, d.Rule)
			}
		})
	}
}

// compilerGaps are the cases of TestBadContracts that toolc's compiler
// accepts although the strict schema rejects them, and why: known gaps,
// reported rather than hidden. The test fails once the compiler rejects
// one of them, so that it is removed from here.
var compilerGaps = map[string]string{}

// TestBadContracts checks each rule that the strict schema encodes: a
// contract that breaks it fails `cue vet -c`, with an error at the
// offending path that says what is wrong. The compiler must reject the
// same contract.
func TestBadContracts(t *testing.T) {
	tests := []struct {
		name     string
		contract string
		path     string // of the error, dotted
		msg      string // in the error's message
	}{
		// Service.
		{"service name format", pkg(`name: "Weather_Service", version: "1.0.0", description: "d", tools: {}`), "name", "out of bound"},
		{"service name missing", pkg(`version: "1.0.0", description: "d", tools: {}`), "name", "required but not present"},
		{"service version semver", pkg(`name: "svc", version: "v1.0", description: "d", tools: {}`), "version", "out of bound"},
		{"service version missing", pkg(`name: "svc", description: "d", tools: {}`), "version", "required but not present"},
		{"service description blank", pkg(`name: "svc", version: "1.0.0", description: " ", tools: {}`), "description", "out of bound"},
		{"service description missing", pkg(`name: "svc", version: "1.0.0", tools: {}`), "description", "required but not present"},
		{"service without tools", service(``), "tools", "required but not present"},
		{"service handler blank", service(`handler: ""
			tools: {}`), "handler", "out of bound"},
		{"service mcp title blank", service(`mcp: title: ""
			tools: {}`), "mcp.title", "out of bound"},
		{"service unknown key", service(`tool: {}
			tools: {}`), "tool", "not allowed"},

		// Auth.
		{"scope with a space", service(`auth: scopes: ["orders read"]
			tools: {}`), "auth.scopes.0", "out of bound"},
		{"scope empty", contract(`description: "d", auth: scopes: [""]
			request: fields: {}`), "tools.t.auth.scopes.0", "out of bound"},
		{"scope with a backslash", contract(`description: "d", auth: scopes: ["a\\b"]
			request: fields: {}`), "tools.t.auth.scopes.0", "out of bound"},
		{"scope with a quote", service(`auth: scopes: ["a\"b"]
			tools: {}`), "auth.scopes.0", "out of bound"},
		{"scope not ASCII", service(`auth: scopes: ["café"]
			tools: {}`), "auth.scopes.0", "out of bound"},
		{"scope listed twice", service(`auth: scopes: ["a", "a"]
			tools: {}`), "auth.scopes", "UniqueItems"},
		{"scopes not a list", service(`auth: scopes: "a"
			tools: {}`), "auth.scopes", "conflicting values"},
		{"auth unknown key", service(`auth: scope: ["a"]
			tools: {}`), "auth.scope", "not allowed"},

		// Tool.
		{"tool name format", service(`tools: QueryWeather: {description: "d", request: fields: {}}`), "tools.QueryWeather", "must start with a lower-case letter"},
		{"tool name too long", service(`tools: ` + strings.Repeat("a", 65) + `: {description: "d", request: fields: {}}`), "tools." + strings.Repeat("a", 65), "must start with a lower-case letter"},
		{"tool description missing", contract(`request: fields: {}`), "tools.t.description", "required but not present"},
		{"tool description blank", contract(`description: ""
			request: fields: {}`), "tools.t.description", "out of bound"},
		{"tool title blank", contract(`description: "d", title: " "
			request: fields: {}`), "tools.t.title", "out of bound"},
		{"tool without request", contract(`description: "d"`), "tools.t.request", "required but not present"},
		{"tool with a second request", contract(`description: "d"
			request: fields: {}
			request2: fields: {}`), "tools.t.request2", "not allowed"},
		{"tool deprecated not bool", contract(`description: "d", deprecated: "yes"
			request: fields: {}`), "tools.t.deprecated", "mismatched types"},
		{"tool strict not bool", contract(`description: "d", strict: 1
			request: fields: {}`), "tools.t.strict", "mismatched types"},
		{"tool task unknown value", contract(`description: "d", task: "always"
			request: fields: {}`), "tools.t.task", "conflicting values"},
		{"tool task not a string", contract(`description: "d", task: true
			request: fields: {}`), "tools.t.task", "conflicting values"},
		{"annotation not bool", contract(`description: "d", annotations: readOnly: "yes"
			request: fields: {}`), "tools.t.annotations.readOnly", "mismatched types"},
		{"annotation unknown", contract(`description: "d", annotations: readonly: true
			request: fields: {}`), "tools.t.annotations.readonly", "not allowed"},
		{"mcp name format", contract(`description: "d", mcp: name: "has space"
			request: fields: {}`), "tools.t.mcp.name", "out of bound"},
		{"request without fields", contract(`description: "d"
			request: description: "Args"`), "tools.t.request.fields", "required but not present"},
		{"request description blank", contract(`description: "d"
			request: {description: "", fields: {}}`), "tools.t.request.description", "out of bound"},
		{"response without fields", contract(`description: "d"
			request: fields: {}
			response: description: "Result"`), "tools.t.response.fields", "required but not present"},
		{"response field checked too", contract(`description: "d"
			request: fields: {}
			response: fields: y: {type: "string"}`), "tools.t.response.fields.y.description", "required but not present"},

		// Field names, types and descriptions.
		{"field name format", contract(`description: "d"
			request: fields: City: {type: "string", description: "d"}`), "tools.t.request.fields.City", "must be snake_case"},
		{"field type missing", field(`description: "d"`), "tools.t.request.fields.x.type", "required but not present"},
		{"field type unknown", field(`type: "strin", description: "d"`), "tools.t.request.fields.x.type", `unknown type "strin"`},
		{"field type object", field(`type: "object", description: "d"`), "tools.t.request.fields.x.type", "contracts are flat"},
		{"field type not a string", field(`type: 1, description: "d"`), "tools.t.request.fields.x.type", "mismatched types"},
		{"field nests fields", field(`type: "string", description: "d", fields: {}`), "tools.t.request.fields.x.fields", "contracts are flat"},
		{"field nests properties", field(`type: "string", description: "d", properties: {}`), "tools.t.request.fields.x.properties", "contracts are flat"},
		{"field description missing", field(`type: "string"`), "tools.t.request.fields.x.description", "required but not present"},
		{"field description blank", field(`type: "string", description: "\t"`), "tools.t.request.fields.x.description", "out of bound"},
		{"field required not bool", field(`type: "string", description: "d", required: "no"`), "tools.t.request.fields.x.required", "mismatched types"},
		{"field deprecated not bool", field(`type: "string", description: "d", deprecated: 1`), "tools.t.request.fields.x.deprecated", "mismatched types"},
		{"field unknown key", field(`type: "string", description: "d", minlength: 1`), "tools.t.request.fields.x.minlength", "not allowed"},

		// Defaults.
		{"default on a required field", field(`type: "string", description: "d", default: "a"`), "tools.t.request.fields.x.default", "only to optional fields"},
		{"default on an explicitly required field", field(`type: "string", description: "d", required: true, default: "a"`), "tools.t.request.fields.x.default", "only to optional fields"},
		{"default of the wrong type", field(`type: "integer", description: "d", required: false, default: "3"`), "tools.t.request.fields.x.default", "mismatched types"},
		{"default float on integer", field(`type: "integer", description: "d", required: false, default: 3.5`), "tools.t.request.fields.x.default", "mismatched types"},
		{"default beyond int64", field(`type: "integer", description: "d", required: false, default: 9223372036854775808`), "tools.t.request.fields.x.default", "out of bound"},
		{"default beyond float64", field(`type: "number", description: "d", required: false, default: 1e309`), "tools.t.request.fields.x.default", "out of bound"},
		{"maximum beyond float64", field(`type: "number", description: "d", maximum: 1e309`), "tools.t.request.fields.x.maximum", "out of bound"},
		{"maxLength beyond int64", field(`type: "string", description: "d", maxLength: 99999999999999999999999`), "tools.t.request.fields.x.maxLength", "out of bound"},
		{"enum value beyond int64", field(`type: "integer", description: "d", enum: [1, 99999999999999999999999]`), "tools.t.request.fields.x.enum.1", "out of bound"},
		{"default outside string enum", field(`type: "string", description: "d", required: false, enum: ["a", "b"], default: "c"`), "tools.t.request.fields.x.default", "not one of the enum values"},
		{"default outside integer enum", field(`type: "integer", description: "d", required: false, enum: [1, 2], default: 3`), "tools.t.request.fields.x.default", "not one of the enum values"},
		{"default below minimum", field(`type: "integer", description: "d", required: false, minimum: 1, default: 0`), "tools.t.request.fields.x.default", "out of bound >=1"},
		{"default above maximum", field(`type: "number", description: "d", required: false, maximum: 1, default: 1.5`), "tools.t.request.fields.x.default", "out of bound <=1"},
		{"default at exclusiveMinimum", field(`type: "number", description: "d", required: false, exclusiveMinimum: 0, default: 0`), "tools.t.request.fields.x.default", "out of bound >0"},
		{"default at exclusiveMaximum", field(`type: "integer", description: "d", required: false, exclusiveMaximum: 10, default: 10`), "tools.t.request.fields.x.default", "out of bound <10"},
		{"default shorter than minLength", field(`type: "string", description: "d", required: false, minLength: 3, default: "ab"`), "tools.t.request.fields.x.default", "MinRunes(3)"},
		{"default longer than maxLength", field(`type: "string", description: "d", required: false, maxLength: 1, default: "ab"`), "tools.t.request.fields.x.default", "MaxRunes(1)"},
		{"default not matching pattern", field(`type: "string", description: "d", required: false, pattern: "^[a-z]+$", default: "A"`), "tools.t.request.fields.x.default", "out of bound =~"},
		{"default with too few items", field(`type: "array", items: "string", description: "d", required: false, minItems: 1, default: []`), "tools.t.request.fields.x.default", "MinItems(1)"},
		{"default with too many items", field(`type: "array", items: "string", description: "d", required: false, maxItems: 1, default: ["a", "b"]`), "tools.t.request.fields.x.default", "MaxItems(1)"},
		{"default with repeated items", field(`type: "array", items: "integer", description: "d", required: false, uniqueItems: true, default: [1, 1]`), "tools.t.request.fields.x.default", "UniqueItems"},
		{"default with items of the wrong type", field(`type: "array", items: "integer", description: "d", required: false, default: ["1"]`), "tools.t.request.fields.x.default.0", "mismatched types"},
		{"default of a boolean not bool", field(`type: "boolean", description: "d", required: false, default: "true"`), "tools.t.request.fields.x.default", "mismatched types"},

		// Bounds.
		{"minLength above maxLength", field(`type: "string", description: "d", minLength: 3, maxLength: 2`), "tools.t.request.fields.x.maxLength", "below minLength"},
		{"minimum above maximum", field(`type: "integer", description: "d", minimum: 3, maximum: 2`), "tools.t.request.fields.x.maximum", "below minimum"},
		{"exclusive bounds that meet", field(`type: "number", description: "d", exclusiveMinimum: 1, exclusiveMaximum: 1`), "tools.t.request.fields.x.exclusiveMaximum", "not above exclusiveMinimum"},
		{"minimum at exclusiveMaximum", field(`type: "number", description: "d", minimum: 1, exclusiveMaximum: 1`), "tools.t.request.fields.x.exclusiveMaximum", "not above minimum"},
		{"exclusiveMinimum at maximum", field(`type: "integer", description: "d", exclusiveMinimum: 5, maximum: 5`), "tools.t.request.fields.x.maximum", "not above exclusiveMinimum"},
		{"minItems above maxItems", field(`type: "array", items: "string", description: "d", minItems: 2, maxItems: 1`), "tools.t.request.fields.x.maxItems", "below minItems"},
		{"negative minLength", field(`type: "string", description: "d", minLength: -1`), "tools.t.request.fields.x.minLength", "out of bound >=0"},
		{"negative maxItems", field(`type: "array", items: "string", description: "d", maxItems: -1`), "tools.t.request.fields.x.maxItems", "out of bound >=0"},
		{"fractional minLength", field(`type: "string", description: "d", minLength: 1.5`), "tools.t.request.fields.x.minLength", "mismatched types"},
		{"fractional bound on integer", field(`type: "integer", description: "d", minimum: 0.5`), "tools.t.request.fields.x.minimum", "mismatched types"},
		{"uniqueItems not bool", field(`type: "array", items: "string", description: "d", uniqueItems: 1`), "tools.t.request.fields.x.uniqueItems", "mismatched types"},
		{"pattern not RE2", field(`type: "string", description: "d", pattern: "a("`), "tools.t.request.fields.x.pattern", "regexp.Valid"},
		{"format unknown", field(`type: "string", description: "d", format: "datetime"`), "tools.t.request.fields.x.format", `unknown format "datetime"`},

		// Hidden text.
		{"tag characters in a description", contract(`description: "Add \U000E0049\U000E0047\U000E004E"
			request: fields: {}`), "tools.t.description", "out of bound !~"},
		{"bidi override in a title", contract(`description: "d", title: "Add \u202Eevil"
			request: fields: {}`), "tools.t.title", "out of bound !~"},
		{"zero-width space in a service description", pkg(`name: "svc", version: "1.0.0", description: "A\u200Bservice", tools: {}`), "description", "out of bound !~"},
		{"zero-width space in an enum value", field(`type: "string", description: "d", enum: ["fast", "safe\u200B"]`), "tools.t.request.fields.x.enum.1", "out of bound !~"},
		{"terminal escape in a default", field(`type: "string", description: "d", required: false, default: "\u001B[2J"`), "tools.t.request.fields.x.default", "out of bound !~"},
		{"C1 control in an example", field(`type: "array", items: "string", description: "d", examples: [["\u009B1m"]]`), "tools.t.request.fields.x.examples.0.0", "out of bound !~"},
		{"stray variation selector in a field description", field(`type: "string", description: "d\uFE0F"`), "tools.t.request.fields.x.description", "out of bound !~"},
		{"joiner between ASCII letters", field(`type: "string", description: "i\u200Dgnore"`), "tools.t.request.fields.x.description", "out of bound !~"},
		{"zero-width space in a record field's description", field(`type: "array", description: "d", items: fields: y: {type: "string", description: "a\u200Bb"}`), "tools.t.request.fields.x.items.fields.y.description", "out of bound !~"},
		{"hidden text in a tool example", contract(`description: "d"
			request: fields: city: {type: "string", description: "d"}
			examples: [{city: "Ber\u2060lin"}]`), "tools.t.examples.0.city", "out of bound !~"},

		// Constraints that do not fit the type.
		{"minLength on integer", field(`type: "integer", description: "d", minLength: 1`), "tools.t.request.fields.x.minLength", "use minimum and maximum"},
		{"maxLength on array", field(`type: "array", items: "string", description: "d", maxLength: 1`), "tools.t.request.fields.x.maxLength", "use minItems and maxItems"},
		{"pattern on number", field(`type: "number", description: "d", pattern: "1"`), "tools.t.request.fields.x.pattern", "applies to string fields"},
		{"format on integer", field(`type: "integer", description: "d", format: "uuid"`), "tools.t.request.fields.x.format", "applies to string fields"},
		{"minimum on string", field(`type: "string", description: "d", minimum: 1`), "tools.t.request.fields.x.minimum", "use minLength and maxLength"},
		{"exclusiveMaximum on boolean", field(`type: "boolean", description: "d", exclusiveMaximum: 1`), "tools.t.request.fields.x.exclusiveMaximum", "applies to integer and number fields"},
		{"minItems on string", field(`type: "string", description: "d", minItems: 1`), "tools.t.request.fields.x.minItems", "applies to array fields"},
		{"uniqueItems on integer", field(`type: "integer", description: "d", uniqueItems: true`), "tools.t.request.fields.x.uniqueItems", "applies to array fields"},

		// Enums.
		{"enum empty", field(`type: "string", description: "d", enum: []`), "tools.t.request.fields.x.enum", "MinItems(1)"},
		{"enum repeated", field(`type: "integer", description: "d", enum: [1, 1]`), "tools.t.request.fields.x.enum", "UniqueItems"},
		{"enum of the wrong type on string", field(`type: "string", description: "d", enum: ["a", 1]`), "tools.t.request.fields.x.enum.1", "mismatched types"},
		{"enum of the wrong type on integer", field(`type: "integer", description: "d", enum: [1, "2"]`), "tools.t.request.fields.x.enum.1", "mismatched types"},
		{"enum on number", field(`type: "number", description: "d", enum: [1.5]`), "tools.t.request.fields.x.enum", "only allowed on string and integer"},
		{"enum on boolean", field(`type: "boolean", description: "d", enum: [true]`), "tools.t.request.fields.x.enum", "only allowed on string and integer"},
		{"enum on array of numbers", field(`type: "array", items: "number", description: "d", enum: [0.5]`), "tools.t.request.fields.x.enum", "only allowed on string and integer"},
		{"enum on array of wrong type", field(`type: "array", items: "string", description: "d", enum: [["a"]]`), "tools.t.request.fields.x.enum.0", "mismatched types"},
		{"default outside the items' enum", field(`type: "array", items: "string", description: "d", required: false, enum: ["a", "b"], default: ["a", "c"]`), "tools.t.request.fields.x.default.1", "out of bound"},

		// Items.
		{"array without items", field(`type: "array", description: "d"`), "tools.t.request.fields.x.items", "required but not present"},
		{"items on a string", field(`type: "string", items: "string", description: "d"`), "tools.t.request.fields.x.items", "only for array fields"},
		{"items object", field(`type: "array", items: "object", description: "d"`), "tools.t.request.fields.x.items", "not flat"},
		{"items array", field(`type: "array", items: "array", description: "d"`), "tools.t.request.fields.x.items", "not flat"},
		{"items a struct", field(`type: "array", items: {type: "string"}, description: "d"`), "tools.t.request.fields.x.items.type", "items is a type name"},

		// Records.
		{"record in a record", field(`type: "array", description: "d", items: fields: a: {type: "array", description: "d", items: fields: b: {type: "string", description: "d"}}`), "tools.t.request.fields.x.items.fields.a.items", "a record inside a record"},
		{"record without fields", field(`type: "array", description: "d", items: fields: {}`), "tools.t.request.fields.x.items.fields", "MinFields(1)"},
		{"record field without description", field(`type: "array", description: "d", items: fields: a: {type: "string"}`), "tools.t.request.fields.x.items.fields.a.description", "required but not present"},
		{"record field name format", field(`type: "array", description: "d", items: fields: A: {type: "string", description: "d"}`), "tools.t.request.fields.x.items.fields.A", "must be snake_case"},
		{"record field type unknown", field(`type: "array", description: "d", items: fields: a: {type: "strin", description: "d"}`), "tools.t.request.fields.x.items.fields.a.type", `unknown type "strin"`},
		{"record field bounds", field(`type: "array", description: "d", items: fields: a: {type: "integer", description: "d", minimum: 3, maximum: 2}`), "tools.t.request.fields.x.items.fields.a.maximum", "below minimum"},
		{"record field default out of bounds", field(`type: "array", description: "d", items: fields: a: {type: "integer", description: "d", required: false, default: 0, minimum: 1}`), "tools.t.request.fields.x.items.fields.a.default", "out of bound >=1"},
		{"enum on a record", field(`type: "array", description: "d", enum: ["a"], items: fields: a: {type: "string", description: "d"}`), "tools.t.request.fields.x.enum", "does not apply to an array of records"},
		{"uniqueItems on a record", field(`type: "array", description: "d", uniqueItems: true, items: fields: a: {type: "string", description: "d"}`), "tools.t.request.fields.x.uniqueItems", "does not apply to an array of records"},
		{"default on a record", field(`type: "array", description: "d", required: false, default: [], items: fields: a: {type: "string", description: "d"}`), "tools.t.request.fields.x.default", "has no default"},
		{"items as JSON Schema", field(`type: "array", description: "d", items: {type: "object", fields: a: {type: "string", description: "d"}}`), "tools.t.request.fields.x.items.type", "fields: {...} for an array of records"},
		{"items a number", field(`type: "array", description: "d", items: 3`), "tools.t.request.fields.x.items", "fields: {...} for an array of records"},
		{"record example item of the wrong type", field(`type: "array", description: "d", items: fields: a: {type: "string", description: "d"}, examples: [["a"]]`), "tools.t.request.fields.x.examples.0.0", "mismatched types"},
		{"record example item field of the wrong type", field(`type: "array", description: "d", items: fields: a: {type: "string", description: "d"}, examples: [[{a: 1}]]`), "tools.t.request.fields.x.examples.0.0.a", "mismatched types"},
		{"tool example record item unknown field", contract(`description: "d"
			request: fields: e: {type: "array", description: "d", items: fields: a: {type: "string", description: "d"}}
			examples: [{e: [{b: "x"}]}]`), "tools.t.examples.0.e.0.b", "not a field of the record"},
		{"tool example record item lacks a required field", contract(`description: "d"
			request: fields: e: {type: "array", description: "d", items: fields: {a: {type: "string", description: "d"}, n: {type: "integer", description: "d"}}}
			examples: [{e: [{a: "x"}]}]`), "tools.t.examples.0.e.0.n", "required but not present"},
		{"tool example record item field out of bounds", contract(`description: "d"
			request: fields: e: {type: "array", description: "d", items: fields: n: {type: "integer", description: "d", maximum: 3}}
			examples: [{e: [{n: 4}]}]`), "tools.t.examples.0.e.0.n", "out of bound <=3"},
		{"tool example record too few items", contract(`description: "d"
			request: fields: e: {type: "array", description: "d", minItems: 1, items: fields: n: {type: "integer", description: "d"}}
			examples: [{e: []}]`), "tools.t.examples.0.e", "MinItems(1)"},

		// Free-form values.
		{"default on a free-form field", field(`type: "json", description: "d", required: false, default: {}`), "tools.t.request.fields.x.default", "has no default"},
		{"object on a string", field(`type: "string", description: "d", object: true`), "tools.t.request.fields.x.object", "applies to json fields"},
		{"object not bool", field(`type: "json", description: "d", object: "yes"`), "tools.t.request.fields.x.object", "mismatched types"},
		{"enum on a free-form field", field(`type: "json", description: "d", enum: [1]`), "tools.t.request.fields.x.enum", "only allowed on string and integer"},
		{"minLength on a free-form field", field(`type: "json", description: "d", minLength: 1`), "tools.t.request.fields.x.minLength", "applies to string fields"},
		{"free-form object example not an object", field(`type: "json", description: "d", object: true, examples: [[1]]`), "tools.t.request.fields.x.examples.0", "mismatched types"},
		{"tool example free-form object null", contract(`description: "d"
			request: fields: q: {type: "json", description: "d", object: true}
			examples: [{q: null}]`), "tools.t.examples.0.q", "mismatched types"},

		// Field examples.
		{"field example of the wrong type", field(`type: "string", description: "d", examples: [1]`), "tools.t.request.fields.x.examples.0", "mismatched types"},
		{"field example outside the enum", field(`type: "string", description: "d", enum: ["a"], examples: ["b"]`), "tools.t.request.fields.x.examples.0", `out of bound =~"^(a)$"`},
		{"field example out of bounds", field(`type: "integer", description: "d", maximum: 5, examples: [6]`), "tools.t.request.fields.x.examples.0", "out of bound <=5"},
		{"field example array item type", field(`type: "array", items: "boolean", description: "d", examples: [[1]]`), "tools.t.request.fields.x.examples.0.0", "mismatched types"},

		// Upstream servers.
		{"upstream with neither command nor url", service(`upstream: dir: "x"
			tools: t: {description: "d", request: fields: {}}`), "_upstream", "upstream needs command"},
		{"upstream with command and url", service(`upstream: {command: ["srv"], url: "https://x/mcp"}
			tools: t: {description: "d", request: fields: {}}`), "upstream.url", "both command and url"},
		{"upstream with an empty command", service(`upstream: command: []
			tools: t: {description: "d", request: fields: {}}`), "upstream.command", "incompatible list lengths"},
		{"upstream url of another scheme", service(`upstream: url: "ftp://x/mcp"
			tools: t: {description: "d", request: fields: {}}`), "upstream.url", "out of bound"},
		{"upstream env with a literal value", service(`upstream: {command: ["srv"], env: TOKEN: "s3cret"}
			tools: t: {description: "d", request: fields: {}}`), "upstream.env.TOKEN", "mismatched types"},
		{"upstream env from nowhere", service(`upstream: {command: ["srv"], env: TOKEN: {prefix: "x"}}
			tools: t: {description: "d", request: fields: {}}`), "upstream.env.TOKEN.env", "say where the value comes from"},
		{"upstream env from toolc's token", service(`upstream: {command: ["srv"], env: TOKEN: {env: "TOOLC_TOKEN"}}
			tools: t: {description: "d", request: fields: {}}`), "upstream.env.TOKEN.env", "invalid value"},
		{"upstream env from env and file", service(`upstream: {command: ["srv"], env: TOKEN: {env: "T", file: "t"}}
			tools: t: {description: "d", request: fields: {}}`), "upstream.env.TOKEN.file", "not both"},
		{"upstream headers on a command", service(`upstream: {command: ["srv"], headers: Authorization: {env: "T"}}
			tools: t: {description: "d", request: fields: {}}`), "upstream.headers", "use env"},
		{"upstream env on a url", service(`upstream: {url: "https://x/mcp", env: T: {env: "T"}}
			tools: t: {description: "d", request: fields: {}}`), "upstream.env", "use headers"},
		{"upstream bad duration", service(`upstream: {command: ["srv"], callTimeout: "30 seconds"}
			tools: t: {description: "d", request: fields: {}}`), "upstream.callTimeout", "out of bound"},
		{"upstream and handler", service(`upstream: command: ["srv"]
			handler: "./cmd/h"
			tools: t: {description: "d", request: fields: {}}`), "handler", "no Go handler"},
		{"upstream unknown key", service(`upstream: {command: ["srv"], cwd: "x"}
			tools: t: {description: "d", request: fields: {}}`), "upstream.cwd", "not allowed"},

		// Tool examples.
		{"example argument of the wrong type", contract(`description: "d"
			request: fields: city: {type: "string", description: "d"}
			examples: [{city: 1}]`), "tools.t.examples.0.city", "mismatched types"},
		{"example number argument of the wrong type", contract(`description: "d"
			request: fields: ratio: {type: "number", description: "d"}
			examples: [{ratio: "1"}]`), "tools.t.examples.0.ratio", "mismatched types"},
		{"example array argument item type", contract(`description: "d"
			request: fields: tags: {type: "array", items: "string", description: "d"}
			examples: [{tags: ["a", 2]}]`), "tools.t.examples.0.tags.1", "mismatched types"},
		{"example lacks a required argument", contract(`description: "d"
			request: fields: {city: {type: "string", description: "d"}, days: {type: "integer", description: "d", required: false}}
			examples: [{days: 2}]`), "tools.t.examples.0.city", "required but not present"},
		{"example with an unknown argument", contract(`description: "d"
			request: fields: city: {type: "string", description: "d"}
			examples: [{city: "Berlin", cty: "Paris"}]`), "tools.t.examples.0.cty", "not a field of the request"},
		{"example argument outside the enum", contract(`description: "d"
			request: fields: unit: {type: "string", description: "d", enum: ["celsius", "fahrenheit"]}
			examples: [{unit: "kelvin"}]`), "tools.t.examples.0.unit", "out of bound"},
		{"example argument out of bounds", contract(`description: "d"
			request: fields: days: {type: "integer", description: "d", minimum: 1, maximum: 14}
			examples: [{days: 15}]`), "tools.t.examples.0.days", "out of bound <=14"},
		{"example argument not matching the pattern", contract(`description: "d"
			request: fields: code: {type: "string", description: "d", pattern: "^[A-Z]{3}$"}
			examples: [{code: "eur"}]`), "tools.t.examples.0.code", "out of bound =~"},
		{"example not an object", contract(`description: "d"
			request: fields: {}
			examples: ["Berlin"]`), "tools.t.examples.0", "mismatched types"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := newModule(t, map[string]string{"c/c.cue": tt.contract})
			err := vet(t, root, "c")
			if err == nil {
				t.Fatalf("strict schema accepts it; want an error at %s", tt.path)
			}
			found := false
			for _, e := range cueerrors.Errors(err) {
				format, args := e.Msg()
				if strings.Join(e.Path(), ".") == tt.path && strings.Contains(fmt.Sprintf(format, args...), tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("want an error at %s containing %q; got:\n%s", tt.path, tt.msg, cueerrors.Details(err, nil))
			}
			rejected := len(compile(t, root, "c")) > 0
			gap, known := compilerGaps[tt.name]
			switch {
			case known && rejected:
				t.Errorf("the compiler now rejects it: drop it from compilerGaps (%s)", gap)
			case known:
				t.Logf("known gap: the compiler accepts it: %s", gap)
			case !rejected:
				t.Errorf("the strict schema rejects it at %s, but the compiler reports no error", tt.path)
			}
		})
	}
}

// TestSchemaAloneVetsClean: `cue vet -c ./...` in CI vets the schema
// package itself, every definition with no contract around it, so no
// definition may fail on its own (an error() that fires when a field is
// absent, say, must sit where the value is used).
func TestSchemaAloneVetsClean(t *testing.T) {
	if err := vet(t, "..", "schema"); err != nil {
		t.Errorf("cue vet -c of the schema package fails:\n%s", cueerrors.Details(err, nil))
	}
}
