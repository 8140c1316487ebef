package validate

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The format checks below give the same verdicts as
// github.com/santhosh-tekuri/jsonschema/v6 (Apache-2.0) with format
// assertions on, so that toolc's runtime and any JSON Schema validator
// built on that library agree. They follow its code closely, quirks
// included (for example, "+1.2.3.4" is an ipv4 address to it, because each
// part is read with strconv.Atoi); the differential fuzz test holds them to
// it.

// format is one string format that a field may require.
type stringFormat struct {
	name string
	// hint is what a valid value looks like, for error messages.
	hint  string
	check func(string) bool
}

// Formats returns the names of the string formats that the validator
// asserts, in the order that messages list them: the formats a contract may
// name.
func Formats() []string {
	return []string{"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri"}
}

var stringFormats = map[string]*stringFormat{
	"date-time": {"date-time", `an RFC 3339 date-time such as "2026-05-01T09:30:00Z"`, isDateTime},
	"date":      {"date", `an RFC 3339 full-date such as "2026-05-01"`, isDate},
	"time":      {"time", `an RFC 3339 full-time with an offset such as "09:30:00Z" or "09:30:00+02:00"`, isTime},
	"duration":  {"duration", `an ISO 8601 duration such as "P3D", "PT1H30M" or "P2W"`, isDuration},
	"email":     {"email", `an email address such as "ada@example.com"`, isEmail},
	"hostname":  {"hostname", `a host name such as "api.example.com"`, isHostname},
	"ipv4":      {"ipv4", `an IPv4 address such as "192.0.2.1"`, isIPv4},
	"ipv6":      {"ipv6", `an IPv6 address such as "2001:db8::1"`, isIPv6},
	"uuid":      {"uuid", `a UUID such as "123e4567-e89b-12d3-a456-426614174000"`, isUUID},
	"uri":       {"uri", `an absolute URI such as "https://example.com/path"`, isURI},
}

func isUUID(s string) bool {
	// 8-4-4-4-12 hex digits.
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDuration(s string) bool {
	s, ok := strings.CutPrefix(s, "P")
	if !ok || s == "" {
		return false
	}
	if w, ok := strings.CutSuffix(s, "W"); ok {
		if w == "" {
			return false
		}
		for i := 0; i < len(w); i++ {
			if w[i] < '0' || w[i] > '9' {
				return false
			}
		}
		return true
	}
	allUnits := [2]string{"YMD", "HMS"}
	for i, part := range strings.Split(s, "T") {
		if i != 0 && part == "" {
			return false
		}
		if i >= len(allUnits) {
			return false
		}
		units := allUnits[i]
		for part != "" {
			n := 0
			for n < len(part) && part[n] >= '0' && part[n] <= '9' {
				n++
			}
			if n == 0 {
				return false
			}
			part = part[n:]
			if part == "" {
				return false
			}
			j := strings.IndexByte(units, part[0])
			if j == -1 {
				return false
			}
			units = units[j+1:]
			part = part[1:]
		}
	}
	return true
}

func isIPv4(s string) bool {
	groups := strings.Split(s, ".")
	if len(groups) != 4 {
		return false
	}
	for _, g := range groups {
		if len(g) > 1 && g[0] == '0' {
			return false
		}
		n, err := strconv.Atoi(g)
		if err != nil || n < 0 || n > 255 {
			return false
		}
	}
	return true
}

func isIPv6(s string) bool {
	if !strings.Contains(s, ":") {
		return false
	}
	addr, err := netip.ParseAddr(s)
	return err == nil && addr.Zone() == ""
}

func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func isEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	if at == -1 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return false
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		q := local[1 : len(local)-1]
		if strings.IndexByte(q, '\\') != -1 || strings.IndexByte(q, '"') != -1 {
			return false
		}
	} else {
		if strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, "..") {
			return false
		}
		for i := 0; i < len(local); i++ {
			c := local[i]
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			case strings.IndexByte(".!#$%&'*+-/=?^_`{|}~", c) >= 0:
			default:
				return false
			}
		}
	}
	if len(domain) >= 2 && domain[0] == '[' && domain[len(domain)-1] == ']' {
		ip := domain[1 : len(domain)-1]
		if rest, ok := strings.CutPrefix(ip, "IPv6:"); ok {
			return isIPv6(rest)
		}
		return isIPv4(ip)
	}
	return isHostname(domain)
}

func isDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

func isTime(str string) bool {
	// hh:mm:ss, then an optional fraction, then Z or ±hh:mm.
	if len(str) < 9 || str[2] != ':' || str[5] != ':' {
		return false
	}
	var hms [3]int
	for i, tok := range strings.SplitN(str[:8], ":", 3) {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 {
			return false
		}
		hms[i] = n
	}
	h, m, s := hms[0], hms[1], hms[2]
	if h > 23 || m > 59 || s > 60 {
		return false
	}
	str = str[8:]
	if rest, ok := strings.CutPrefix(str, "."); ok {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		str = rest[n:]
	}
	if str != "z" && str != "Z" {
		if len(str) != 6 {
			return false
		}
		var sign int
		switch str[0] {
		case '+':
			sign = -1
		case '-':
			sign = +1
		default:
			return false
		}
		str = str[1:]
		if str[2] != ':' {
			return false
		}
		var zhm [2]int
		for i, tok := range strings.SplitN(str, ":", 2) {
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 {
				return false
			}
			zhm[i] = n
		}
		zh, zm := zhm[0], zhm[1]
		if zh > 23 || zm > 59 {
			return false
		}
		hm := (h*60 + m) + sign*(zh*60+zm)
		if hm < 0 {
			hm += 24 * 60
		}
		h, m = hm/60, hm%60
	}
	// A leap second only at 23:59 UTC.
	return s < 60 || (h == 23 && m == 59)
}

func isDateTime(s string) bool {
	if len(s) < 20 || (s[10] != 't' && s[10] != 'T') {
		return false
	}
	return isDate(s[:10]) && isTime(s[11:])
}

func isURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	// net/url does not check an IPv6 host.
	if host := u.Hostname(); strings.Contains(host, ":") {
		if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") || !isIPv6(host) {
			return false
		}
	}
	return u.IsAbs()
}
