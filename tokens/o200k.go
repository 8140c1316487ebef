package tokens

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// encoder counts o200k_base tokens: the encoding of OpenAI's current
// models (GPT-4o, GPT-4.1, GPT-5, o-series). Its vocabulary, the ranks of
// the byte sequences that byte-pair encoding merges, is tiktoken-go's,
// whose package embeds it as Go source: nothing is downloaded, ever.
//
// The encoding itself is toolc's own: the split into pieces (pieceLen) and
// the merges within each piece (merge). tiktoken-go splits with the
// encoding's regular expression in dlclark/regexp2, which gets two cases
// wrong against OpenAI's tiktoken and js-tiktoken: a run of spaces and
// newlines (" \n \n" is one token, 56319; tiktoken-go makes it two), and
// U+007F, which it drops. It is also slow: 3 to 7 MB/s, seconds for a
// 2,000-tool catalog's projections, which toolc check counts on every run.
// pieceLen splits about ten times as fast, and a definition repeats its
// pieces ("description", "string", field names; a 2,000-tool catalog has
// about 1,500 distinct ones in 700,000), so each text merges each of its
// pieces once. TestReference holds the counts to js-tiktoken's;
// TestSplitMatchesTiktoken and FuzzCount to tiktoken-go's, where it is
// right.
//
// The encoding's pattern needs lookahead (\s+(?!\S) keeps the last space
// of a run for the word after it), which Go's regexp does not have, so a
// Go library either runs it in dlclark/regexp2 or splits by hand. The
// other maintained one, github.com/pkoukk/tiktoken-go (v0.1.8, with the
// vocabulary embedded by github.com/pkoukk/tiktoken-go-loader v0.0.2),
// counts right: all 82 reference texts, and the 2,000-tool catalog's six
// projections (11.5 MB, 2,669,827 tokens) as this encoder does. But it took
// 13 to 18 s for those 11.5 MB where this encoder takes 0.5 to 1.2 s (and
// tiktoken-go 5.6 to 8.7 s), and 1 s to load its vocabulary, where
// newO200k takes 71 ms: toolc check on 2,000 tools would spend 13 s or
// more of CPU counting instead of about half a second (BENCHMARKS.md,
// "How exact the counts are").
//
// An encoder is safe for concurrent use.
type encoder struct {
	ranks map[string]uint32
}

// maxPieces bounds the pieces a count remembers. Past it, new pieces are
// merged each time.
const maxPieces = 1 << 16

var o200kBase = sync.OnceValue(newO200k)

// newO200k builds the encoder, once per process, on first use: tiktoken-go
// builds its vocabulary, and the encoder reads it back one token at a
// time, as Decode gives it (BenchmarkVocabulary).
func newO200k() *encoder {
	c := codec.NewO200kBase()
	ranks := make(map[string]uint32, o200kTokens)
	for id := range uint(o200kTokens) {
		s, err := c.Decode([]uint{id})
		if err != nil {
			panic("tokens: o200k_base has no token " + strconv.Itoa(int(id)) + ": " + err.Error())
		}
		ranks[s] = uint32(id)
	}
	return &encoder{ranks: ranks}
}

// o200kTokens is the number of ordinary tokens of o200k_base, numbered
// from 0; the special ones (<|endoftext|>) follow and are never counted.
const o200kTokens = 199998

// count returns the number of tokens in s.
func (e *encoder) count(s string) int {
	n := 0
	e.each(s, func(_ int, tokens int) { n += tokens })
	return n
}

// each calls f with the offset and the token count of each piece of s, in
// order. Invalid UTF-8 is counted as U+FFFD.
func (e *encoder) each(s string, f func(offset, tokens int)) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	pieces := map[string]int{}
	for off := 0; off < len(s); {
		n := pieceLen(s[off:])
		p := s[off : off+n]
		tokens, ok := pieces[p]
		if !ok {
			tokens = e.merge(p)
			if len(pieces) < maxPieces {
				pieces[p] = tokens
			}
		}
		f(off, tokens)
		off += n
	}
}

// merge returns the number of tokens that byte-pair encoding makes of a
// piece: starting from its bytes, it merges, again and again, the
// adjacent pair whose concatenation is the token of the lowest rank,
// leftmost first, until no pair is a token. A heap of the pairs keeps a
// long piece from taking quadratic time.
func (e *encoder) merge(p string) int {
	if _, ok := e.ranks[p]; ok {
		return 1
	}
	n := len(p)
	// The parts are a linked list over the byte offsets where they start;
	// rank[i] is the rank of part i merged with the next one.
	next := make([]int32, n+1)
	prev := make([]int32, n+1)
	rank := make([]uint32, n+1)
	for i := range next {
		next[i], prev[i], rank[i] = int32(i+1), int32(i-1), noRank
	}
	next[n] = -1
	rankOf := func(i int32) uint32 {
		j := next[i]
		if j < 0 || next[j] < 0 {
			return noRank
		}
		if r, ok := e.ranks[p[i:next[j]]]; ok {
			return r
		}
		return noRank
	}
	h := &pairHeap{}
	for i := int32(0); i < int32(n)-1; i++ {
		if rank[i] = rankOf(i); rank[i] != noRank {
			h.push(pair{rank[i], i})
		}
	}
	parts := n
	for len(*h) > 0 {
		top := h.pop()
		if rank[top.at] != top.rank {
			continue // stale: the part changed since
		}
		i, j := top.at, next[top.at]
		// Merge part j into part i.
		k := next[j]
		next[i] = k
		if k >= 0 {
			prev[k] = i
		}
		rank[j] = noRank
		parts--
		for _, b := range [2]int32{i, prev[i]} {
			if b < 0 {
				continue
			}
			if rank[b] = rankOf(b); rank[b] != noRank {
				h.push(pair{rank[b], b})
			}
		}
	}
	return parts
}

const noRank = math.MaxUint32

// pair is a merge candidate: part at and the next one, whose
// concatenation has rank.
type pair struct {
	rank uint32
	at   int32
}

// pairHeap is a min-heap of pairs by rank, then offset: the leftmost of
// equal ranks merges first.
type pairHeap []pair

func (h pairHeap) less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].at < h[b].at
}

func (h *pairHeap) push(x pair) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s.less(l, m) {
			m = l
		}
		if r < len(s) && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// pieceLen returns the length in bytes of the first piece of s, which is
// not empty: the first match of o200k_base's split pattern,
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n/]*
//	|\s*[\r\n]+
//	|\s+(?!\S)
//	|\s+
//
// under backtracking, leftmost-first semantics: the first alternative that
// matches wins, and within it each quantifier takes as much as it can
// while the rest still matches. Every rune is a letter, a number, a space
// or one of [^\s\p{L}\p{N}], so one alternative always matches.
func pieceLen(s string) int {
	if n := wordLen(s); n > 0 {
		return n
	}
	r, w := decode(s, 0)
	switch {
	case isNumber(r):
		// \p{N}{1,3}
		n := w
		for i := 1; i < 3 && n < len(s); i++ {
			r, w := decode(s, n)
			if !isNumber(r) {
				break
			}
			n += w
		}
		return n
	case !isSpace(r) || r == ' ' && len(s) > 1 && isPunct(first(s[1:])):
		// ` ?[^\s\p{L}\p{N}]+[\r\n/]*`: r is not a letter (wordLen) or
		// a number, so a non-space is one of the class.
		n := 0
		if r == ' ' {
			n = 1
		}
		for n < len(s) {
			r, w := decode(s, n)
			if !isPunct(r) {
				break
			}
			n += w
		}
		for n < len(s) && (s[n] == '\r' || s[n] == '\n' || s[n] == '/') {
			n++
		}
		return n
	}
	// r is a space: \s*[\r\n]+ takes the run of spaces up to its last
	// newline; \s+(?!\S) the run, but its last space when a non-space
	// follows; \s+ a single space before a non-space.
	end, lastNL, lastW := 0, -1, 0
	for end < len(s) {
		r, w := decode(s, end)
		if !isSpace(r) {
			break
		}
		if r == '\r' || r == '\n' {
			lastNL = end
		}
		end += w
		lastW = w
	}
	switch {
	case lastNL >= 0:
		return lastNL + 1
	case end == len(s) || end == lastW:
		return end
	default:
		return end - lastW
	}
}

// wordLen returns the length of the first piece of s when one of the two
// word alternatives matches it, and 0 when neither does.
func wordLen(s string) int {
	// An optional prefix [^\r\n\p{L}\p{N}], tried with it first.
	r, w := decode(s, 0)
	prefix := r != '\r' && r != '\n' && !isLetter(r) && !isNumber(r)
	if prefix {
		if n := lowerWord(s, w); n > 0 {
			return n
		}
	}
	if n := lowerWord(s, 0); n > 0 {
		return n
	}
	if prefix {
		if n := upperWord(s, w); n > 0 {
			return n
		}
	}
	return upperWord(s, 0)
}

// lowerWord matches [U]*[L]+ and a contraction at s[p:], where U is
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and L [\p{Ll}\p{Lm}\p{Lo}\p{M}], and
// returns the end of the match, or 0. U* backtracks from its longest run
// to the last position where L+ can start.
func lowerWord(s string, p int) int {
	end := p
	for end < len(s) {
		r, w := decode(s, end)
		if !isUpperClass(r) {
			break
		}
		end += w
	}
	start := -1
	if end < len(s) && isLowerClass(first(s[end:])) {
		start = end
	} else {
		for k := end; k > p; {
			r, w := utf8.DecodeLastRuneInString(s[:k])
			k -= w
			if isLowerClass(r) {
				start = k
				break
			}
		}
	}
	if start < 0 {
		return 0
	}
	e := start
	for e < len(s) {
		r, w := decode(s, e)
		if !isLowerClass(r) {
			break
		}
		e += w
	}
	return e + contraction(s[e:])
}

// upperWord matches [U]+[L]* and a contraction at s[p:], or returns 0.
func upperWord(s string, p int) int {
	e := p
	for e < len(s) {
		r, w := decode(s, e)
		if !isUpperClass(r) {
			break
		}
		e += w
	}
	if e == p {
		return 0
	}
	for e < len(s) {
		r, w := decode(s, e)
		if !isLowerClass(r) {
			break
		}
		e += w
	}
	return e + contraction(s[e:])
}

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at the
// start of s, or 0.
func contraction(s string) int {
	if len(s) < 2 || s[0] != '\'' {
		return 0
	}
	switch s[1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if len(s) > 2 && s[2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if len(s) > 2 && s[2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func first(s string) rune {
	r, _ := decode(s, 0)
	return r
}

// The classes of the pattern. ASCII, nearly all of a definition, is looked
// up in a table.
const (
	cUpper  = 1 << iota // \p{Lu}
	cLower              // \p{Ll}
	cNumber             // \p{N}
	cSpace              // \s
)

var ascii = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case 'A' <= c && c <= 'Z':
			t[c] = cUpper
		case 'a' <= c && c <= 'z':
			t[c] = cLower
		case '0' <= c && c <= '9':
			t[c] = cNumber
		case c == ' ', '\t' <= c && c <= '\r':
			t[c] = cSpace
		}
	}
	return t
}()

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return ascii[r]&(cUpper|cLower) != 0
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return ascii[r]&cNumber != 0
	}
	return unicode.IsNumber(r)
}

// isSpace is \s: Unicode's White_Space, which is what Go's IsSpace tests
// and what .NET's \s, [\f\n\r\t\v\x85\p{Z}], and so regexp2's, amounts to.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return ascii[r]&cSpace != 0
	}
	return unicode.IsSpace(r)
}

// isPunct is [^\s\p{L}\p{N}].
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return ascii[r] == 0
	}
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// isUpperClass is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpperClass(r rune) bool {
	if r < utf8.RuneSelf {
		return ascii[r]&cUpper != 0
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isLowerClass is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLowerClass(r rune) bool {
	if r < utf8.RuneSelf {
		return ascii[r]&cLower != 0
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}
