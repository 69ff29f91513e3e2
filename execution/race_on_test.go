//go:build race

package execution_test

// raceEnabled is whether the race detector is on (it slows the long
// randomized tests about tenfold).
const raceEnabled = true
