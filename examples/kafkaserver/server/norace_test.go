//go:build !race

package server

// raceEnabled is true when the tests run with -race.
const raceEnabled = false
