//go:build !race

package httpapi_test

// raceOn: the race detector's sync.Pool drops values at random, so that
// allocation counts vary from run to run under it.
const raceOn = false
