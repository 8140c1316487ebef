// Package httpjson writes the JSON answers that toolc's HTTP handlers
// share: a value, or {"error": message}.
package httpjson

import (
	"encoding/json"
	"net/http"
)

// Write answers with status and v as JSON, without HTML escapes: the
// answers are read by programs, and a tool's text should arrive as sent.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// Error answers with status and {"error": msg}.
func Error(w http.ResponseWriter, status int, msg string) {
	Write(w, status, map[string]string{"error": msg})
}
