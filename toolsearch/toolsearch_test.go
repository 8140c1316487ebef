package toolsearch_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolc/toolc/bench/corpus"
	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/toolsearch"
)

func TestTerms(t *testing.T) {
	for in, want := range map[string]string{
		"create_invoice":              "creat invoic",
		"createInvoice":               "creat invoic",
		"Create an invoice":           "creat invoic",
		"HTTPServer v2 listInvoices":  "http server v 2 list invoic",
		"the invoices were refunded":  "invoic refund",
		"queries, statuses, boxes":    "query status box",
		"Search dashboards by status": "search dashboard status",
	} {
		if got := strings.Join(toolsearch.Terms(in), " "); got != want {
			t.Errorf("Terms(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearch(t *testing.T) {
	field := func(name, desc string) *catalog.Field {
		return &catalog.Field{Name: name, Type: catalog.String, Description: desc, Required: true}
	}
	c := &catalog.Catalog{Services: []*catalog.Service{{Name: "shop", Tools: []*catalog.Tool{
		{Name: "create_invoice", Description: "Create an invoice for an order", Request: catalog.Message{Fields: []*catalog.Field{field("order_id", "The order to bill")}}},
		{Name: "refund_payment", Description: "Refund a payment, in full or in part", Request: catalog.Message{Fields: []*catalog.Field{field("payment_id", "The payment")}}},
		{Name: "get_weather", Description: "Current weather for a city", Request: catalog.Message{Fields: []*catalog.Field{field("city", "City name, e.g. Berlin")}}},
	}}}}
	ix := toolsearch.New(c)
	for query, want := range map[string]string{
		"bill an order":                "create_invoice",
		"give the money back":          "",
		"refunding payments":           "refund_payment",
		"what is it like in Oslo city": "get_weather",
		"createInvoice":                "create_invoice",
	} {
		hits := ix.Search(query, 1)
		got := ""
		if len(hits) > 0 {
			got = hits[0].Tool
		}
		if got != want {
			t.Errorf("Search(%q) = %v, want %q first", query, hits, want)
		}
	}
	if hits := ix.Search("invoice", 0); hits != nil {
		t.Errorf("Search with n 0 = %v", hits)
	}
}

// A query is what a model would ask for: content words of the tool's
// description, not the tool's name. Two kinds, each deterministic per
// tool:
//   - first: the first sentence's content words, up to eight: what the
//     tool does, as its author put it first;
//   - sample: five content words drawn from anywhere in the description.
type queryKind struct {
	name string
	make func(t *catalog.Tool) string
}

var queryKinds = []queryKind{
	{"first", func(t *catalog.Tool) string {
		first, _, _ := strings.Cut(t.Description, ". ")
		return strings.Join(contentWords(first, 8), " ")
	}},
	{"sample", func(t *catalog.Tool) string {
		ws := contentWords(t.Description, 1000)
		h := fnv.New64a()
		h.Write([]byte(t.Name))
		r := rand.New(rand.NewPCG(h.Sum64(), 1))
		r.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
		return strings.Join(ws[:min(5, len(ws))], " ")
	}},
}

func contentWords(s string, n int) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-'", r)
	}) {
		if len(toolsearch.Terms(w)) > 0 && len(out) < n {
			out = append(out, w)
		}
	}
	return out
}

var corpora sync.Map // tools → *catalog.Catalog

func corpusCatalog(tb testing.TB, tools int) *catalog.Catalog {
	tb.Helper()
	if c, ok := corpora.Load(tools); ok {
		return c.(*catalog.Catalog)
	}
	dir := filepath.Join(tb.TempDir(), "corpus")
	if _, err := corpus.Write(dir, corpus.ForTools(tools)); err != nil {
		tb.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		tb.Fatal(err)
	}
	if res.HasErrors() {
		tb.Fatalf("the corpus has errors: %v", res.Diagnostics[0])
	}
	corpora.Store(tools, res.Catalog)
	return res.Catalog
}

// recall returns the share of the catalog's tools that a query of the
// kind finds in the top k, and the rank of each miss.
func recall(c *catalog.Catalog, ix *toolsearch.Index, kind queryKind, k int) (float64, []string) {
	found, total := 0, 0
	var misses []string
	for s, t := range c.Tools() {
		total++
		q := kind.make(t)
		hits := ix.Search(q, 50)
		rank := slices.IndexFunc(hits, func(h toolsearch.Hit) bool { return h.Service == s.Name && h.Tool == t.Name })
		if rank >= 0 && rank < k {
			found++
		} else {
			misses = append(misses, fmt.Sprintf("%s (rank %d) for %q", t.Name, rank+1, q))
		}
	}
	return float64(found) / float64(total), misses
}

// TestRecall: on a corpus of 500 tools, a query taken from each tool's
// description finds that tool in the first five. The corpus holds each
// kind of service five times (billing, billing-2, ...), with the same
// tools worded alike, which is what makes it hard.
func TestRecall(t *testing.T) {
	c := corpusCatalog(t, 500)
	ix := toolsearch.New(c)
	if ix.Len() != 500 {
		t.Fatalf("indexed %d tools", ix.Len())
	}
	for _, kind := range queryKinds {
		r, misses := recall(c, ix, kind, 5)
		t.Logf("%s: recall@5 %.3f, %d misses", kind.name, r, len(misses))
		if r < 0.9 {
			t.Errorf("%s: recall@5 %.3f; misses include %v", kind.name, r, misses[:min(5, len(misses))])
		}
	}
}

// BenchmarkSearch reports the time of a query on a catalog of 500 and of
// 2,000 tools, its p50 and p99, and recall@5 for each kind of query.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			c := corpusCatalog(b, n)
			start := time.Now()
			ix := toolsearch.New(c)
			build := time.Since(start)
			var queries []string
			for _, kind := range queryKinds {
				for _, t := range c.Tools() {
					queries = append(queries, kind.make(t))
				}
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				t0 := time.Now()
				ix.Search(q, 5)
				lat = append(lat, time.Since(t0))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(build.Milliseconds()), "build-ms")
			for _, kind := range queryKinds {
				r, _ := recall(c, ix, kind, 5)
				b.ReportMetric(r, "recall@5-"+kind.name)
			}
		})
	}
}
