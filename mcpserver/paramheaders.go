package mcpserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/runtime"
)

// Mcp-Param-* headers (x-mcp-header, SEP-2243) carry a tool's arguments a
// second time, for gateways that route or isolate tenants on them, so
// they must say what the handler runs with. go-sdk checks them only when
// a call's arguments are a JSON object it can read as one, against the
// bytes as sent: it skipped the string form of the arguments that toolc
// accepts (the handler ran with "us" under a header that said "eu"), and
// took an empty header for an absent one. So toolc checks them itself,
// against the arguments as the runtime reads them for the handler
// (runtime.ArgumentCheck): the string form unwrapped, escapes decoded, an
// optional null left out, integers by value. One reading, whatever the
// spelling. Waits for go-sdk: a check of the headers against the arguments
// its handler is given, whatever their form.
//
// A 2026-07-28 request must carry a header for each such argument it
// gives, and none for one it does not (strict). A request of an earlier
// revision need not carry them (those clients do not send them), but one
// it does carry is held to the same rules: a gateway routes on what it
// sees, whatever the revision.

// paramHeaderCheck is the runtime.ArgumentCheck of an HTTP request's
// Mcp-Param-* headers; strict for a 2026-07-28 request.
func paramHeaderCheck(h http.Header, strict bool) runtime.ArgumentCheck {
	return func(t runtime.ToolInfo, given, valid json.RawMessage) error {
		if problem := paramHeaderProblem(h, t, given, valid, strict); problem != "" {
			return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: problem}
		}
		return nil
	}
}

// maxSafeInteger bounds the integers a header carries (SEP-2243:
// JavaScript's safe integers), as go-sdk does.
const maxSafeInteger = 1<<53 - 1

// paramHeaderProblem says what is wrong with the Mcp-Param-* headers of a
// call of t whose arguments are given (as sent, the string form
// unwrapped) and valid (as the handler receives them), or "". Headers the
// tool does not declare are left alone, as intermediaries must leave
// them.
func paramHeaderProblem(h http.Header, t runtime.ToolInfo, given, valid json.RawMessage, strict bool) string {
	var givenArgs, validArgs map[string]json.RawMessage
	decoded := false
	for _, f := range t.Tool.Request.Fields {
		if f.MCPHeader == "" {
			continue
		}
		name := "Mcp-Param-" + f.MCPHeader
		values := h.Values(name)
		if !strict && len(values) == 0 {
			continue
		}
		if len(values) > 1 {
			return fmt.Sprintf("header mismatch: %s appears %d times", name, len(values))
		}
		for _, v := range values {
			for i := 0; i < len(v); i++ {
				if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
					return fmt.Sprintf("header mismatch: %s has the byte %#x, which a header value may not carry; send such a value as =?base64?...?=", name, c)
				}
			}
		}
		if !decoded {
			// Both are valid arguments by now: one object, each key once.
			decoded = true
			_ = json.Unmarshal(given, &givenArgs)
			_ = json.Unmarshal(valid, &validArgs)
		}
		raw, ok := givenArgs[f.Name]
		present := ok && !bytes.Equal(raw, []byte("null"))
		switch {
		case !present && len(values) > 0:
			return fmt.Sprintf("header mismatch: unexpected %s header for the absent or null argument %q", name, f.Name)
		case !present:
			continue
		case len(values) == 0:
			return fmt.Sprintf("header mismatch: missing %s header for the argument %q", name, f.Name)
		}
		if problem := headerMatches(name, values[0], f, validArgs[f.Name]); problem != "" {
			return "header mismatch: " + problem
		}
	}
	return ""
}

// headerMatches compares one header value with the argument of field f,
// as the handler receives it (JSON), and says how they differ, or "".
func headerMatches(name, header string, f *catalog.Field, arg json.RawMessage) string {
	if header == "" {
		// go-sdk takes an empty value for a missing header, and its client
		// sends an empty string so: an empty string travels as
		// =?base64??=.
		return fmt.Sprintf("%s is empty; send an empty string as =?base64??=", name)
	}
	value, ok := decodeHeaderValue(header)
	if !ok {
		return fmt.Sprintf("%s is not valid base64 inside =?base64?...?=", name)
	}
	switch f.Type {
	case catalog.String:
		var s string
		if json.Unmarshal(arg, &s) == nil && s == value {
			return ""
		}
	case catalog.Boolean:
		if string(arg) == value {
			return ""
		}
	case catalog.Integer:
		n, err := strconv.ParseInt(string(arg), 10, 64)
		if err != nil || n > maxSafeInteger || n < -maxSafeInteger {
			return fmt.Sprintf("the argument %q is outside ±%d, the integers a header can carry", f.Name, int64(maxSafeInteger))
		}
		if h, ok := headerInteger(value); ok && h == n {
			return ""
		}
	default:
		return fmt.Sprintf("the argument %q is a %s, which no header carries", f.Name, f.Type)
	}
	return fmt.Sprintf("%s value %q does not match the argument %q", name, header, f.Name)
}

// headerInteger reads an integer header: a JSON number whose value is
// an integer within the safe range ("42", "42.0", "4.2e1"), compared by
// value as go-sdk compares it. Hexadecimal, "Inf", a sign "+" and the
// other spellings strconv.ParseFloat takes are refused: a gateway reads
// them otherwise, or not at all.
func headerInteger(s string) (int64, bool) {
	if !isJSONNumber(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) || f > maxSafeInteger || f < -maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// isJSONNumber reports whether s is a number as JSON writes one.
func isJSONNumber(s string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// decodeHeaderValue undoes SEP-2243's =?base64?...?= wrapping, as go-sdk
// does; a value without it is itself.
func decodeHeaderValue(v string) (string, bool) {
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if inner, ok = strings.CutSuffix(inner, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(inner)
			return string(b), err == nil
		}
	}
	return v, true
}
