package catalog

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckValue reports whether v, a JSON-shaped value (string, int64 or
// float64, bool, []any), fits the field: its type, items, enum and bounds.
// The error says what is wrong in words a model can act on.
func (f *Field) CheckValue(v any) error {
	if f.Type == Array {
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("must be an array of %s, not %s", plural(f.Items), describeKind(v))
		}
		if f.MinItems != nil && int64(len(items)) < *f.MinItems {
			return fmt.Errorf("must have at least %s, not %d", count(*f.MinItems, "item"), len(items))
		}
		if f.MaxItems != nil && int64(len(items)) > *f.MaxItems {
			return fmt.Errorf("must have at most %s, not %d", count(*f.MaxItems, "item"), len(items))
		}
		for i, item := range items {
			if err := checkType(f.Items, item); err != nil {
				return fmt.Errorf("item at index %d %v", i, err)
			}
			if len(f.Enum) > 0 && !f.inEnum(item) {
				return fmt.Errorf("item at index %d must be one of %s, not %s", i, FormatValues(f.Enum), FormatValue(item))
			}
		}
		if f.UniqueItems {
			seen := map[string]int{}
			for i, item := range items {
				key := fmt.Sprintf("%T:%v", item, item)
				if j, dup := seen[key]; dup {
					return fmt.Errorf("must have unique items, and the items at indexes %d and %d are equal", j, i)
				}
				seen[key] = i
			}
		}
		return nil
	}
	if err := checkType(f.Type, v); err != nil {
		return err
	}
	if len(f.Enum) > 0 && !f.inEnum(v) {
		return fmt.Errorf("must be one of %s, not %s", FormatValues(f.Enum), FormatValue(v))
	}
	switch f.Type {
	case String:
		s := v.(string)
		n := int64(utf8.RuneCountInString(s))
		if f.MinLength != nil && n < *f.MinLength {
			return fmt.Errorf("must be at least %s long, not %d", count(*f.MinLength, "character"), n)
		}
		if f.MaxLength != nil && n > *f.MaxLength {
			return fmt.Errorf("must be at most %s long, not %d", count(*f.MaxLength, "character"), n)
		}
		if f.Pattern != "" {
			re, err := regexp.Compile(f.Pattern)
			if err == nil && !re.MatchString(s) {
				return fmt.Errorf("must match the pattern %s", f.Pattern)
			}
		}
	case Integer, Number:
		x := toFloat(v)
		switch {
		case f.Minimum != nil && x < *f.Minimum:
			return fmt.Errorf("must be at least %s, not %s", FormatNumber(*f.Minimum), FormatValue(v))
		case f.Maximum != nil && x > *f.Maximum:
			return fmt.Errorf("must be at most %s, not %s", FormatNumber(*f.Maximum), FormatValue(v))
		case f.ExclusiveMinimum != nil && x <= *f.ExclusiveMinimum:
			return fmt.Errorf("must be greater than %s, not %s", FormatNumber(*f.ExclusiveMinimum), FormatValue(v))
		case f.ExclusiveMaximum != nil && x >= *f.ExclusiveMaximum:
			return fmt.Errorf("must be less than %s, not %s", FormatNumber(*f.ExclusiveMaximum), FormatValue(v))
		}
	}
	return nil
}

// inEnum reports whether v is in the enum, which holds the values of the
// items on an array field.
func (f *Field) inEnum(v any) bool {
	t := f.Type
	if t == Array {
		t = f.Items
	}
	for _, e := range f.Enum {
		if t == Integer || t == Number {
			if toFloat(e) == toFloat(v) {
				return true
			}
		} else if e == v {
			return true
		}
	}
	return false
}

// IntegerRange is the range of an integer field: int64, the type of the
// Go field that toolc generates for it.
const IntegerRange = "from -9223372036854775808 to 9223372036854775807 (64 bits)"

func checkType(t Type, v any) error {
	ok := false
	switch t {
	case String:
		_, ok = v.(string)
	case Boolean:
		_, ok = v.(bool)
	case Number:
		switch v.(type) {
		case int64, float64, int:
			ok = true
		}
	case Integer:
		switch x := v.(type) {
		case int64, int:
			ok = true
		case float64:
			ok = x == math.Trunc(x) && !math.IsInf(x, 0)
			if ok && !(x >= -(1<<63) && x < 1<<63) {
				return fmt.Errorf("must be an integer %s, not %s", IntegerRange, FormatNumber(x))
			}
		}
	}
	if !ok {
		return fmt.Errorf("must be %s, not %s", article(t), describeKind(v))
	}
	return nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func article(t Type) string {
	if t == Integer || t == Array {
		return "an " + string(t)
	}
	return "a " + string(t)
}

func plural(t Type) string {
	if t == "" {
		return "values"
	}
	return string(t) + "s"
}

func describeKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "the string " + strconv.Quote(x)
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	case int64, int:
		return "the integer " + FormatValue(x)
	case float64:
		return "the number " + FormatValue(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// FormatValue renders a JSON-shaped value the way it appears in a contract.
func FormatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return FormatNumber(x)
	case []any:
		return "[" + strings.TrimSuffix(strings.TrimPrefix(FormatValues(x), "["), "]") + "]"
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

// count spells a quantity with its noun: "1 item", "3 items".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}
