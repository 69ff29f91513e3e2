//go:build !race

package hunks

// raceDetector reports whether the tests run under -race, which multiplies
// memory (the memory tests that compare with a diff's size skip).
const raceDetector = false
