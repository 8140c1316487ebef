package tokens

import "github.com/toolc/toolc/catalog"

// RequestText returns the text that Measure counts for a target: the
// TypeScript or JSON of a request's tools.
func RequestText(c *catalog.Catalog, target catalog.Target, strict bool) (string, error) {
	t, _, err := request(c, target, strict)
	if err != nil {
		return "", err
	}
	return t.b.String(), nil
}

// CountO200k is the o200k_base count of s.
func CountO200k(s string) int { return o200kBase().count(s) }

// Tricky are the texts that take each way through the split.
var Tricky = tricky

// NewVocabulary builds the o200k_base encoder anew, for its benchmark.
func NewVocabulary() { newO200k() }
