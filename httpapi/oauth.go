package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
)

// accessCaller returns the caller of r's access token, if v accepts it,
// else nil, for /healthz, which answers everyone but tells details only to
// a caller.
func accessCaller(r *http.Request, v *oauth.Verifier) *oauth.Caller {
	scheme, raw, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	c, err := v.Verify(r.Context(), strings.TrimSpace(raw))
	if err != nil {
		return nil
	}
	return c
}

// visibleCatalog is the catalog as the caller may see it.
func visibleCatalog(c *oauth.Caller, cat *catalog.Catalog) *catalog.Catalog {
	if c == nil {
		return cat
	}
	out := &catalog.Catalog{Fingerprint: cat.Fingerprint}
	for _, s := range cat.Services {
		var tools []*catalog.Tool
		for _, t := range s.Tools {
			if runtime.Allows(c, t) {
				tools = append(tools, t)
			}
		}
		if len(tools) > 0 {
			ns := *s
			ns.Tools = tools
			out.Services = append(out.Services, &ns)
		}
	}
	return out
}

// catalogScopes returns every scope that a tool of the catalog needs,
// sorted: the scopes_supported of the resource's metadata.
func catalogScopes(cat *catalog.Catalog) []string {
	var out []string
	for _, t := range cat.Tools() {
		out = append(out, t.Scopes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
