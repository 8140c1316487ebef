package catalog_test

import (
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

func ptr[T any](v T) *T { return &v }

func TestCheckValue(t *testing.T) {
	str := &catalog.Field{Type: catalog.String, MinLength: ptr[int64](2), MaxLength: ptr[int64](4), Pattern: "^[a-zé]+$"}
	unit := &catalog.Field{Type: catalog.String, Enum: []any{"celsius", "fahrenheit"}}
	days := &catalog.Field{Type: catalog.Integer, Minimum: ptr(1.0), Maximum: ptr(14.0)}
	level := &catalog.Field{Type: catalog.Integer, Enum: []any{int64(1), int64(2)}}
	ratio := &catalog.Field{Type: catalog.Number, ExclusiveMinimum: ptr(0.0), ExclusiveMaximum: ptr(1.0)}
	flag := &catalog.Field{Type: catalog.Boolean}
	hours := &catalog.Field{Type: catalog.Array, Items: catalog.Integer, MinItems: ptr[int64](1), MaxItems: ptr[int64](3), UniqueItems: true}

	tests := []struct {
		f    *catalog.Field
		v    any
		want string // "" for valid, else a substring of the error
	}{
		{str, "abc", ""},
		{str, "éé", ""}, // lengths count characters, not bytes
		{str, "a", "at least 2 characters long, not 1"},
		{str, "abcde", "at most 4 characters long, not 5"},
		{str, "AB", "must match the pattern ^[a-zé]+$"},
		{str, 3, "must be a string, not the integer 3"},
		{str, nil, "must be a string, not null"},
		{unit, "celsius", ""},
		{unit, "kelvin", `must be one of ["celsius", "fahrenheit"], not "kelvin"`},
		{days, int64(3), ""},
		{days, 3.0, ""}, // JSON has one number type; 3.0 is the integer 3
		{days, 3.5, "must be an integer, not the number 3.5"},
		{days, int64(0), "must be at least 1, not 0"},
		{days, int64(15), "must be at most 14, not 15"},
		{days, "3", `must be an integer, not the string "3"`},
		{level, 2.0, ""},
		{level, int64(3), "must be one of [1, 2], not 3"},
		{ratio, 0.5, ""},
		{ratio, 0.0, "must be greater than 0, not 0"},
		{ratio, int64(1), "must be less than 1, not 1"},
		{flag, false, ""},
		{flag, "true", `must be a boolean, not the string "true"`},
		{hours, []any{int64(1), int64(2)}, ""},
		{hours, []any{}, "must have at least 1 item, not 0"},
		{hours, []any{int64(1), int64(2), int64(3), int64(4)}, "must have at most 3 items, not 4"},
		{hours, []any{int64(1), "2"}, `item at index 1 must be an integer, not the string "2"`},
		{hours, []any{int64(1), int64(1)}, "unique items, and the items at indexes 0 and 1 are equal"},
		{hours, int64(1), "must be an array of integers, not the integer 1"},
	}
	for _, tt := range tests {
		err := tt.f.CheckValue(tt.v)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s CheckValue(%#v) = %v, want valid", tt.f.Type, tt.v, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s CheckValue(%#v) = %v, want error containing %q", tt.f.Type, tt.v, err, tt.want)
		}
	}
}
