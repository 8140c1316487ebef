package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/toolc/toolc/catalog"
)

// newHandler serves the catalog's projections:
//
//	GET /tools?format=F[&strict=1][&tools=a,b]
//
// returns exactly the value that goes in a provider request's tools field:
// F is one of openai-chat, openai-responses, anthropic, gemini, bedrock and
// mcp; strict puts every tool in strict mode where the provider has one;
// tools is an allowlist of function names. A bad query is a 400 that says
// what is wrong.
func newHandler(cat *catalog.Catalog) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tools", func(w http.ResponseWriter, r *http.Request) {
		data, err := project(cat, r.URL.Query().Get("format"), r.URL.Query().Get("strict"), r.URL.Query().Get("tools"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Toolc-Catalog", cat.Fingerprint)
		w.Write(data)
	})
	return mux
}

// project returns the projection that a /tools query asks for.
func project(cat *catalog.Catalog, format, strict, tools string) ([]byte, error) {
	if format == "" {
		return nil, fmt.Errorf("the format parameter is required: %s", targetNames())
	}
	target, err := catalog.ParseTarget(format)
	if err != nil {
		return nil, err
	}
	opts := catalog.ProjectOptions{}
	if strict != "" {
		if opts.Strict, err = strconv.ParseBool(strict); err != nil {
			return nil, fmt.Errorf("strict=%q: want 1 or 0", strict)
		}
	}
	if tools != "" {
		var names []string
		for _, n := range strings.Split(tools, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("tools=%q names no tool", tools)
		}
		if cat, err = cat.SelectFor(target, names...); err != nil {
			return nil, err
		}
	}
	return cat.ProjectJSON(target, opts)
}

func targetNames() string {
	var names []string
	for _, t := range catalog.Targets() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}
