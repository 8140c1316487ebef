package taskstore_test

import (
	"testing"

	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) taskstore.Store { return taskstore.NewMemory() })
}

func TestNewIDIsUnguessable(t *testing.T) {
	seen := map[string]bool{}
	for range 10_000 {
		id := taskstore.NewID()
		if len(id) != 22 || seen[id] {
			t.Fatalf("id %q: 22 base64url characters (128 bits), never twice", id)
		}
		seen[id] = true
	}
}
