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

// goName turns a contract name (snake_case: query_weather, city_id) into an
// exported Go name in Go's style (QueryWeather, CityID). It returns "" when
// the name has no letters or digits to build one from.
//
// An exported name is never a Go keyword, since every keyword is lower
// case: a field called type becomes Type, and range becomes Range.
func goName(name string) string {
	var b strings.Builder
	for _, word := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		b.WriteString(goWord(word))
	}
	return b.String()
}

// goWord capitalizes one word: an initialism entirely (id → ID), its plural
// all but the s (ids → IDs), and any other word's first letter (city →
// City). A word that has upper-case letters already keeps them.
func goWord(word string) string {
	if strings.ToLower(word) == word {
		upper := strings.ToUpper(word)
		if initialisms[upper] {
			return upper
		}
		if stem := strings.TrimSuffix(upper, "S"); len(stem) > 1 && stem != upper && initialisms[stem] {
			return stem + "s"
		}
	}
	r, n := utf8.DecodeRuneInString(word)
	return string(unicode.ToUpper(r)) + word[n:]
}
