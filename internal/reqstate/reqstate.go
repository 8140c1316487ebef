// Package reqstate seals and opens the requestState of MCP's multi
// round-trip requests (SEP-2322): what a server remembers of a call
// between its rounds, held by the client.
//
// The client must not be able to read or change it: it carries the
// user's earlier answers, and says which questions the server asked. A
// state is therefore encrypted and authenticated with AES-256-GCM under
// a key of the server's (replicas that share the key accept each other's
// states), binds the tool, a digest of the call's arguments, the caller it
// was issued to and the questions asked, expires, and is bounded in size before anything is
// decoded. The standard library's crypto does all of it.
package reqstate

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolc/toolc/internal/inputfile"
)

// MaxSize bounds a sealed state, in bytes of its text: a longer one is
// refused before it is decoded, and Seal refuses to make one.
const MaxSize = 64 << 10

// MinSecret is the least length of a key's secret, in bytes.
const MinSecret = 32

// version prefixes every state, so that a later format can be told apart.
const version = "v1."

// Errors of Open. Each wraps ErrInvalid.
var (
	ErrInvalid  = errors.New("invalid requestState")
	ErrMismatch = fmt.Errorf("%w: it belongs to another call (tool or arguments differ)", ErrInvalid)
	ErrCaller   = fmt.Errorf("%w: it was issued to another caller; call the tool again without it", ErrInvalid)
	ErrExpired  = fmt.Errorf("%w: it has expired; call the tool again without it", ErrInvalid)
	ErrForged   = fmt.Errorf("%w: it was not issued by this server (altered, or sealed under another key)", ErrInvalid)
	ErrTooLarge = fmt.Errorf("%w: it is over %d bytes", ErrInvalid, MaxSize)
	ErrFormat   = fmt.Errorf("%w: it is not a requestState of this server's form", ErrInvalid)
)

// Key seals and opens states.
type Key struct {
	aead cipher.AEAD
}

// NewKey derives the sealing key from secret, at least MinSecret bytes
// of it (HKDF-SHA256), so that any long random string serves.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) < MinSecret {
		return nil, fmt.Errorf("the requestState key must be at least %d bytes, not %d", MinSecret, len(secret))
	}
	k, err := hkdf.Key(sha256.New, secret, nil, "toolc requestState v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Key{aead: aead}, nil
}

// GenerateSecret returns a new random secret, for a server that was given
// none: its states are then good only on this process.
func GenerateSecret() []byte {
	b := make([]byte, MinSecret)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

// State is what a call keeps between its rounds.
type State struct {
	// Tool is the tool's MCP name, or for a prompt "prompt:" and its
	// name (no MCP name holds a colon).
	Tool string `json:"t"`
	// Args is the SHA-256 of the call's arguments (see ArgsDigest).
	Args []byte `json:"a"`
	// Caller is a digest of who the state was issued to (see CallerDigest),
	// empty when the server knows no caller: another caller's token does
	// not resume a call, with its answers so far, that it did not start.
	Caller []byte `json:"u,omitempty"`
	// Expires is when the state stops being accepted, in Unix seconds.
	Expires int64 `json:"e"`
	// Asked are the questions of the last round, which the next may answer.
	Asked []Question `json:"q,omitempty"`
	// Answers are the answers of the earlier rounds, carried forward.
	Answers []Answer `json:"r,omitempty"`
}

// Question is one question asked: its id, method and the SHA-256 of its
// params.
type Question struct {
	ID     string `json:"i"`
	Method string `json:"m"`
	Params []byte `json:"p"`
	// Schema is an elicitation's requestedSchema, which its answer must
	// match.
	Schema json.RawMessage `json:"s,omitempty"`
}

// Answer is an answer given, to the question whose params hash to Params.
type Answer struct {
	ID     string          `json:"i"`
	Params []byte          `json:"p"`
	Result json.RawMessage `json:"r"`
}

// Seal encrypts s into a requestState.
func (k *Key) Seal(s *State) (string, error) {
	plain, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	rand.Read(nonce)
	sealed := k.aead.Seal(nonce, nonce, plain, []byte(version))
	out := version + base64.RawURLEncoding.EncodeToString(sealed)
	if len(out) > MaxSize {
		return "", fmt.Errorf("the call's answers so far make a requestState of %d bytes, over the limit of %d", len(out), MaxSize)
	}
	return out, nil
}

// Open decrypts and checks a requestState for a call of tool with
// arguments of the digest args, by the caller of the digest caller (nil
// for none), at now.
func (k *Key) Open(token, tool string, args, caller []byte, now time.Time) (*State, error) {
	if len(token) > MaxSize {
		return nil, ErrTooLarge
	}
	if len(token) < len(version) || token[:len(version)] != version {
		return nil, ErrFormat
	}
	sealed, err := base64.RawURLEncoding.DecodeString(token[len(version):])
	if err != nil || len(sealed) < k.aead.NonceSize()+k.aead.Overhead() {
		return nil, ErrFormat
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], []byte(version))
	if err != nil {
		return nil, ErrForged
	}
	var s State
	if err := json.Unmarshal(plain, &s); err != nil {
		// Authentic, yet not ours to read: a format of another version.
		return nil, ErrFormat
	}
	if now.Unix() >= s.Expires {
		return nil, ErrExpired
	}
	if s.Tool != tool || string(s.Args) != string(args) {
		return nil, ErrMismatch
	}
	if !bytes.Equal(s.Caller, caller) {
		return nil, ErrCaller
	}
	return &s, nil
}

// ArgsDigest is the SHA-256 of a call's arguments in a canonical form
// (encoding/json's, with object keys sorted), so that a client that
// encodes the same arguments with other spacing or key order matches.
// Arguments that are not JSON digest as they are.
func ArgsDigest(args json.RawMessage) []byte {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber() // numbers as written: no float64 rounding of large ones
	var v any
	if err := d.Decode(&v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	sum := sha256.Sum256(args)
	return sum[:]
}

// CallerDigest is the SHA-256 of a caller's OAuth subject and client, the
// identity a state is bound to: the same user through another client is
// another caller, as its token is another token.
func CallerDigest(subject, client string) []byte {
	sum := sha256.Sum256([]byte(subject + "\x00" + client))
	return sum[:]
}

// maxKeyFile bounds a key file: a key is a few dozen bytes.
const maxKeyFile = 64 << 10

// LoadSecret returns the secret of a key file, or else of value (the
// environment variable TOOLC_STATE_KEY, for toolc), with surrounding white
// space trimmed; nil when both are empty. A secret shorter than MinSecret
// is an error that says how to make one.
func LoadSecret(file, value string) ([]byte, error) {
	from := "$TOOLC_STATE_KEY"
	if file != "" {
		// Read as every input file is: a regular file only, so that
		// --state-key-file /dev/zero or a FIFO neither fills memory nor
		// blocks, and within what a key file holds.
		b, err := inputfile.ReadFileMax(file, maxKeyFile)
		if err != nil {
			return nil, fmt.Errorf("the requestState key: %w", err)
		}
		value, from = string(b), file
	}
	secret := []byte(strings.TrimSpace(value))
	switch {
	case file == "" && len(secret) == 0:
		return nil, nil
	case len(secret) < MinSecret:
		return nil, fmt.Errorf("the requestState key in %s has %d bytes, fewer than %d; make one with: head -c 32 /dev/urandom | base64 > state.key", from, len(secret), MinSecret)
	}
	return secret, nil
}
