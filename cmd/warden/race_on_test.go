//go:build race

package main

// raceDetector reports whether the tests run under -race, which multiplies
// memory and time (TestDryRunMemory skips).
const raceDetector = true
