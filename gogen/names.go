package gogen

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// initialisms are the words that Go spells in capitals: golint's list, as
// staticcheck keeps it, with MIME and the hash names added.
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true, "EOF": true, "GUID": true,
	"HTML": true, "HTTP": true, "HTTPS": true, "ID": true, "IP": true, "JSON": true, "JWT": true, "LHS": true,
	"MD5": true, "MIME": true, "QPS": true, "RAM": true, "RHS": true, "RPC": true, "SHA1": true, "SHA256": true,
	"SHA512": true, "SLA": true, "SMTP": true, "SQL": true, "SSH": true, "TCP": true, "TLS": true, "TTL": true,
	"UDP": true, "UI": true, "UID": true, "UUID": true, "URI": true, "URL": true, "UTF8": true, "VM": true,
	"XML": true, "XMPP": true, "XSRF": true, "XSS": true,
}

// goName turns a contract name (snake_case: query_weather, city_id;
// lowerCamelCase: perPage, cityId; with hyphens: get-sum) into an exported
// Go name in Go's style (QueryWeather, CityID, PerPage, GetSum). It
// returns "" when the name has no letters or digits to build one from.
//
// An exported name is never a Go keyword, since every keyword is lower
// case: a field called type becomes Type, and range becomes Range.
func goName(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for _, word := range camelWords(part) {
			b.WriteString(goWord(strings.ToLower(word)))
		}
	}
	return b.String()
}

// camelWords splits a camelCase word where a capital starts a new word:
// cityId is city, Id; userURLPath is user, URL, Path; sha256 stays whole.
func camelWords(s string) []string {
	var words []string
	start := 0
	rs := []rune(s)
	for i := 1; i < len(rs); i++ {
		upper := unicode.IsUpper(rs[i])
		afterLower := !unicode.IsUpper(rs[i-1])
		endsAcronym := unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if upper && (afterLower || endsAcronym) {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	return append(words, string(rs[start:]))
}

// goWord capitalizes one lower-case word: an initialism entirely (id →
// ID), its plural all but the s (ids → IDs), and any other word's first
// letter (city → City).
func goWord(word string) string {
	upper := strings.ToUpper(word)
	if initialisms[upper] {
		return upper
	}
	if stem := strings.TrimSuffix(upper, "S"); len(stem) > 1 && stem != upper && initialisms[stem] {
		return stem + "s"
	}
	r, n := utf8.DecodeRuneInString(word)
	return string(unicode.ToUpper(r)) + word[n:]
}
