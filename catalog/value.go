package catalog

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// IntegerRange is the range of an integer field: int64, the type of the
// Go field that toolc generates for it.
const IntegerRange = "from -9223372036854775808 to 9223372036854775807 (64 bits)"

// FormatValue renders a JSON-shaped value the way it appears in a contract.
func FormatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return FormatNumber(x)
	case []any:
		return "[" + strings.TrimSuffix(strings.TrimPrefix(FormatValues(x), "["), "]") + "]"
	case map[string]any:
		// An item of a record field: its members in key order.
		keys := slices.Sorted(maps.Keys(x))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ": " + FormatValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// FormatValues renders a list of values: [a, b, c].
func FormatValues(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = FormatValue(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// FormatNumber renders a number without a needless exponent or fraction.
func FormatNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
