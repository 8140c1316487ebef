// Package jsonfile reads the versioned JSON files that toolc writes, the
// catalog and the lock: it finds the format key before anything else, so
// that a file of another version is reported as such, decodes strictly,
// and explains what is wrong with a damaged file by line and column.
package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Format returns the value of the file's top-level "format" key; has is
// false when there is none. An error means data is not one JSON value; a
// value that is not an object is an error for Strict.
func Format(data []byte) (format string, has bool, err error) {
	var probe struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return "", false, err
	}
	if probe.Format == nil {
		return "", false, nil
	}
	return *probe.Format, true, nil
}

// Strict decodes data into v: unknown keys are errors, and numbers in
// untyped values stay json.Numbers, for the caller to give their types.
func Strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	return dec.Decode(v)
}

// Describe explains an error of Format or Strict on data in words for the
// user: where the file is damaged, and remedy, what to do about it. name
// says what the file should be ("toolc catalog").
func Describe(data []byte, err error, name, remedy string) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input"):
		return "truncated file: the JSON ends early; " + remedy
	case errors.As(err, &syn):
		line, col := LineCol(data, syn.Offset)
		return fmt.Sprintf("corrupt file at line %d, column %d: %v (a merge conflict?); %s", line, col, syn, remedy)
	case errors.As(err, &typ) && typ.Field == "":
		return "not a " + name + ": the file holds a JSON " + typ.Value + ", not an object"
	case errors.As(err, &typ):
		line, col := LineCol(data, typ.Offset)
		return fmt.Sprintf("corrupt file at line %d, column %d: %s must not be %s; %s", line, col, typ.Field, typ.Value, remedy)
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown key " + key + ": the file was edited, or written by another version of toolc; " + remedy
	}
	return "corrupt file: " + err.Error() + "; " + remedy
}

// LineCol returns the 1-based line and column of the byte before offset:
// encoding/json reports the offset just past the character that broke the
// syntax, or just past the value of the wrong type.
func LineCol(data []byte, offset int64) (int, int) {
	offset = max(0, min(offset, int64(len(data)))-1)
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}
