//go:build race

package log

// raceEnabled is true when the tests run with -race.
const raceEnabled = true
