// Package jsondepth measures how deeply a JSON text nests arrays and
// objects, without decoding it: the bound that the validator and the MCP
// server's readers check before a decoder with a depth limit of its own
// (go-sdk's, 1000) would refuse the text in words of its own, or a
// recursive reader would go deep.
package jsondepth

// Of is the deepest nesting of arrays and objects in data, outside its
// strings. For a text that is not valid JSON it is a bound all the same:
// an unterminated string ends the count there.
func Of(data []byte) int {
	deepest, n := 0, 0
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++ // the escaped byte, which may be a quote
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			n++
			deepest = max(deepest, n)
		case c == '}' || c == ']':
			n--
		}
	}
	return deepest
}
