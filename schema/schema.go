// Package schema embeds the toolc contract language, the CUE package
// github.com/toolc/toolc/schema, so that toolc resolves that import without a
// registry or a network: every contract compiles against the schema that
// was built into the binary that checks it.
package schema

import _ "embed"

// ImportPath is the CUE import path of the contract language.
const ImportPath = "github.com/toolc/toolc/schema"

// Module is the CUE module that holds the contract language.
const Module = "github.com/toolc/toolc@v0"

// FileName is the name of the schema's single source file.
const FileName = "schema.cue"

//go:embed schema.cue
var source string

// Source returns the CUE source of the contract language.
func Source() string { return source }
