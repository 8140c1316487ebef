// Package toolsearch finds a catalog's tools for a query in words: the
// search behind deferred loading, where a model that sees only a few tools
// asks for the others by what it wants done.
//
//	ix := toolsearch.New(cat)
//	hits := ix.Search("refund an invoice", 5) // best first
//
// It ranks with Okapi BM25 (k1 1.2, b 0.75) over each tool's name, title,
// description, and the names and descriptions of its request fields, as
// Anthropic's tool search tool searches (names, descriptions, argument
// names and argument descriptions). The name counts three times and the
// description twice: they say what the tool is for, a field only what it
// takes. Words are split at case changes, digits, underscores and
// punctuation (create_invoice, createInvoice and "create invoice" are one
// query), lower-cased, stripped of English plural and verb endings, and
// stop words are left out.
//
// A hand-written BM25 rather than a search library, because the one Go
// library that scores with BM25, bleve (v2.6.3: ScoringModel "bm25", and an
// in-memory index with bleve.NewMemOnly), measured on the bench corpus with
// the same weighted text and queries (BENCHMARKS.md, "Tool search"), finds
// as well (recall@5 within 2.5 points either way) but builds the index of
// 2,000 tools in 6 to 8.5 s, where New takes 0.2 s, and answers a query 3 to
// 5 times slower. The index is built on a snapshot's first search, so after
// each reload a model's first search would wait those seconds. It would
// also bring 28 modules (go-faiss, the cgo bindings that bleve's vectors
// build tag uses; bbolt; protobuf; seven versions of its segment format)
// for a few thousand short documents. Of the Go BM25 packages looked for,
// the module proxy serves no other (github.com/crawlab-team/bm25 is not
// served).
package toolsearch

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/toolc/toolc/catalog"
)

// Index is a search index over a catalog's tools. It is immutable once
// built, and safe for concurrent use.
type Index struct {
	docs     []doc
	postings map[string][]posting
	avgLen   float64
}

type doc struct {
	service, tool string
	length        float64
}

// posting is a term's frequency in one document.
type posting struct {
	doc  int32
	freq float32
}

// Hit is one tool that a search found, with its score: higher is better.
type Hit struct {
	Service string
	Tool    string
	Score   float64
}

// Weights of the parts of a tool.
const (
	weightName        = 3
	weightDescription = 2
	weightField       = 1
)

// BM25's parameters, the usual ones.
const (
	k1 = 1.2
	b  = 0.75
)

// New indexes every tool of the catalog.
func New(c *catalog.Catalog) *Index {
	ix := &Index{postings: map[string][]posting{}}
	total := 0.0
	for s, t := range c.Tools() {
		freq := map[string]float32{}
		add := func(text string, w float32) {
			for _, term := range Terms(text) {
				freq[term] += w
			}
		}
		add(t.Name, weightName)
		add(t.Title, weightName)
		add(t.Description, weightDescription)
		add(t.Request.Description, weightField)
		for _, f := range t.Request.Fields {
			add(f.Name, weightField)
			add(f.Description, weightField)
		}
		n := int32(len(ix.docs))
		length := 0.0
		for term, f := range freq {
			ix.postings[term] = append(ix.postings[term], posting{n, f})
			length += float64(f)
		}
		ix.docs = append(ix.docs, doc{service: s.Name, tool: t.Name, length: length})
		total += length
	}
	if len(ix.docs) > 0 {
		ix.avgLen = total / float64(len(ix.docs))
	}
	return ix
}

// Len returns the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// Search returns the n tools that best match the query, best first; ties
// keep the catalog's order. A query that shares no word with any tool
// finds nothing.
func (ix *Index) Search(query string, n int) []Hit {
	if n <= 0 || len(ix.docs) == 0 {
		return nil
	}
	scores := map[int32]float64{}
	seen := map[string]bool{}
	N := float64(len(ix.docs))
	for _, term := range Terms(query) {
		if seen[term] {
			continue
		}
		seen[term] = true
		ps := ix.postings[term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (N-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.freq)
			norm := tf * (k1 + 1) / (tf + k1*(1-b+b*ix.docs[p.doc].length/ix.avgLen))
			scores[p.doc] += idf * norm
		}
	}
	hits := make([]Hit, 0, len(scores))
	order := make([]int32, 0, len(scores))
	for d := range scores {
		order = append(order, d)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if scores[a] != scores[b] {
			if scores[a] > scores[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	for _, d := range order[:min(n, len(order))] {
		hits = append(hits, Hit{Service: ix.docs[d].service, Tool: ix.docs[d].tool, Score: scores[d]})
	}
	return hits
}

// Terms returns the search terms of a text: its words, split at case
// changes, digits and anything but letters, lower-cased and stemmed,
// without stop words.
func Terms(text string) []string {
	var terms []string
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if stopWords[w] {
			continue
		}
		terms = append(terms, stem(w))
	}
	return terms
}

// words splits text into runs of letters or of digits, and a run of
// letters again where lower case turns to upper case (createInvoice,
// HTTPServer: HTTP Server).
func words(text string) []string {
	var out []string
	rs := []rune(text)
	start := -1
	for i, r := range rs {
		letter, digit := unicode.IsLetter(r), unicode.IsDigit(r)
		if !letter && !digit {
			if start >= 0 {
				out = append(out, string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start >= 0 {
			prev := rs[i-1]
			split := unicode.IsDigit(prev) != digit ||
				unicode.IsLower(prev) && unicode.IsUpper(r) ||
				unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if split {
				out = append(out, string(rs[start:i]))
				start = i
			}
		} else {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, string(rs[start:]))
	}
	return out
}

// stem strips the commonest English endings, so that "invoices",
// "invoiced" and "invoicing" meet "invoice": a light stemmer, as a
// query's words and a tool's are short and few.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = w[:len(w)-2]
	}
	// "invoic" from "invoicing" and "invoiced" meets "invoice" without
	// its e.
	return strings.TrimSuffix(w, "e")
}

// stopWords are words too common to tell tools apart.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by can do does for from has have how i if in into is it its
		me my no not of on or our so than that the their them then there these this those to was we were what when
		where which who will with you your`) {
		m[w] = true
	}
	return m
}()
