//go:build race

package httpapi_test

const raceOn = true
