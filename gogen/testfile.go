package gogen

import (
	"strconv"
	"strings"

	"github.com/toolc/toolc/catalog"
)

// TestFileName is the name of the generated test file, beside FileName
// in the package that holds the tools' Go API.
const TestFileName = "tools_gen_test.go"

var (
	testingTB       = goIdent{"testing", "TB"}
	toolctestPath   = "github.com/toolc/toolc/toolctest"
	toolctestClient = goIdent{toolctestPath, "Client"}
	toolctestNew    = goIdent{toolctestPath, "New"}
	toolctestCall   = goIdent{toolctestPath, "Call"}
	toolctestResult = goIdent{toolctestPath, "Result"}
)

// GenerateTest returns the Go source of the test file of svc, as a file of
// package goPackage (the package of FileName): the service's compiled
// contract, and newTestClient, which serves it with an implementation of
// Tools over package toolctest and returns a client with one typed method
// per tool. A test then calls a tool as a model would, with the contract's
// validation, defaults and response check, and needs no CUE to do so.
func GenerateTest(svc *catalog.Service, goPackage string) ([]byte, error) {
	g, err := planned(svc, goPackage)
	if err != nil {
		return nil, err
	}
	return g.generateTest(goPackage)
}

func (g *generator) generateTest(goPackage string) ([]byte, error) {
	contract, err := portableContract(g.svc)
	if err != nil {
		return nil, err
	}
	f := newGeneratedFile(goPackage, g.header()...)
	name := g.svc.Name
	f.Comment(0, "newTestClient serves the tools of "+name+" with impl, in memory, and returns a client that calls them as a model would: "+
		"over MCP, each call's arguments checked against the contract and given its defaults before impl sees them, "+
		"and each result held to the contract. The contract is testContract, below: the test needs no CUE. "+
		"t's cleanup closes the client.")
	f.P("func newTestClient(t ", testingTB, ", impl Tools) *testClient {")
	f.P("t.Helper()")
	f.P("return &testClient{client: ", toolctestNew, "(t, testContract, Handlers(impl)...)}")
	f.P("}")
	f.P()
	f.Comment(0, "testClient has a method per tool of "+name+". Each takes the call's arguments as a model sends them: "+
		"JSON text, or a map[string]any of the arguments. A tool error (invalid arguments, a handler's error, a response that breaks the contract) "+
		"is a *toolctest.ToolError whose Message is what the model reads.")
	f.P("type testClient struct {")
	f.Comment(1, "client calls tools by name (CallTool) and lists them as the model sees them (ListTools).")
	f.P("client *", toolctestClient)
	f.P("}")
	for _, t := range g.tools {
		f.P()
		if t.response != nil {
			f.Comment(0, t.method+" calls "+t.Name+" with args and returns its response fields.")
			f.P("func (c *testClient) ", t.method, "(ctx ", contextContext, ", args any) (*", t.response.typeName, ", error) {")
			f.P("return ", toolctestCall, "[", t.response.typeName, "](ctx, c.client, ", strconv.Quote(t.Name), ", args)")
		} else {
			f.Comment(0, t.method+" calls "+t.Name+" with args and returns its result. A tool error is returned as a *"+
				"toolctest.ToolError, with the result.")
			f.P("func (c *testClient) ", t.method, "(ctx ", contextContext, ", args any) (*", toolctestResult, ", error) {")
			f.P("return c.client.CallTool(ctx, ", strconv.Quote(t.Name), ", args)")
		}
		f.P("}")
	}
	f.P()
	f.Comment(0, "testContract is the compiled contract of "+name+", as toolc build writes it, without its positions. "+
		"toolc gen go keeps it in step with the contract, and toolc gen go --check says when it is not.")
	f.P("const testContract = ", goString(contract))
	return f.Content()
}

// portableContract returns the catalog of svc alone as the test file holds
// it: with its directory "." and no positions, so that the file has the
// same bytes wherever toolc gen go runs (positions and directories are
// relative to the working directory), and changes only when the contract
// does. Fingerprints leave positions and directories out, so they stand.
func portableContract(svc *catalog.Service) ([]byte, error) {
	// Copies of everything that changes here, or that Marshal seals: the
	// caller's service stays as it was.
	s := *svc
	s.Dir, s.Pos = ".", catalog.Pos{}
	s.Tools = make([]*catalog.Tool, len(svc.Tools))
	for i, t := range svc.Tools {
		ct := *t
		ct.Pos = catalog.Pos{}
		ct.Request = portableMessage(&t.Request)
		if t.Response != nil {
			r := portableMessage(t.Response)
			ct.Response = &r
		}
		s.Tools[i] = &ct
	}
	return (&catalog.Catalog{Services: []*catalog.Service{&s}}).Marshal()
}

func portableMessage(m *catalog.Message) catalog.Message {
	out := *m
	out.Pos = catalog.Pos{}
	out.Fields = portableFields(m.Fields)
	return out
}

// portableFields copies fields without their positions, and those of a
// record's fields.
func portableFields(fields []*catalog.Field) []*catalog.Field {
	if fields == nil {
		return nil
	}
	out := make([]*catalog.Field, len(fields))
	for i, f := range fields {
		cf := *f
		cf.Pos = catalog.Pos{}
		cf.Fields = portableFields(f.Fields)
		out[i] = &cf
	}
	return out
}

// goString returns s as a Go string expression: raw string literals, with
// each backquote (which a raw literal cannot hold) added as "`".
func goString(s []byte) string {
	parts := strings.Split(string(s), "`")
	for i, p := range parts {
		parts[i] = "`" + p + "`"
	}
	return strings.Join(parts, " + \"`\" + ")
}
