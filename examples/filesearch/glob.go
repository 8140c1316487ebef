package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// globRegexp translates a glob into a regular expression that matches a
// whole slash-separated path: * and ? match within one directory level,
// ** across levels (and **/ also matches no directory at all), {a,b} either
// alternative, [...] a character class ([!...] negated), and \ quotes the
// next character.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0 // of open {
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			switch {
			case strings.HasPrefix(glob[i:], "**/"):
				b.WriteString("(?:.*/)?")
				i += 2
			case strings.HasPrefix(glob[i:], "**"):
				b.WriteString(".*")
				i++
			default:
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("glob %q has a } without a {", glob)
			}
			depth--
			b.WriteString(")")
		case ',':
			if depth > 0 {
				b.WriteString("|")
			} else {
				b.WriteString(",")
			}
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("glob %q has a [ without a ]", glob)
			}
			class := glob[i+1 : i+1+end]
			if rest, ok := strings.CutPrefix(class, "!"); ok {
				class = "^" + rest
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case '\\':
			if i+1 < len(glob) {
				_, size := utf8.DecodeRuneInString(glob[i+1:])
				b.WriteString(regexp.QuoteMeta(glob[i+1 : i+1+size]))
				i += size
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("glob %q has a { without a }", glob)
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("glob %q: %v", glob, err)
	}
	return re, nil
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// parseISODuration parses an ISO 8601 duration such as P7D or PT1H30M. A
// year counts as 365 days and a month as 30; a duration too long for
// time.Duration, some 292 years, saturates.
func parseISODuration(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return 0, fmt.Errorf("%q is not an ISO 8601 duration such as PT30M or P7D", s)
	}
	const day = 24 * time.Hour
	const most = time.Duration(math.MaxInt64)
	units := []time.Duration{365 * day, 30 * day, 7 * day, day, time.Hour, time.Minute, time.Second}
	var d time.Duration
	for i, unit := range units {
		n, err := strconv.ParseInt(m[i+1], 10, 64)
		if m[i+1] == "" {
			continue
		}
		if err != nil || n > int64(most/unit) || time.Duration(n)*unit > most-d {
			return most, nil
		}
		d += time.Duration(n) * unit
	}
	return d, nil
}
