package execution

import (
	"fmt"
	"math"
	"time"
)

// The adaptive request deadline's baselines, multiplier cap and ceiling
// (DESIGN.md §3 rule 1). A request at or below every baseline keeps its base
// timeout exactly.
const (
	BaselineBodyChars = 8000 // serialized request body, characters
	BaselineMaxTokens = 6000 // requested completion tokens
	BaselinePoints    = 4    // messages + 2 for a strict schema + 1 for response healing
	MaxMultiplier     = 8
	TimeoutCeiling    = 10 * time.Minute
)

// RequestShape is what the adaptive deadline reads of a request.
type RequestShape struct {
	BodyChars       int  // length of the serialized chat-completion body
	MaxTokens       int  // requested completion tokens
	Messages        int  // number of messages
	StrictSchema    bool // a strict JSON schema is requested
	ResponseHealing bool // the response-healing plugin is requested
}

// EffectiveTimeout scales base by the request's size and complexity:
// pressure = max(1, BodyChars/8000, MaxTokens/6000, points/4), multiplier =
// min(8, 2^ceil(log2(pressure))), result = min(10m, base × multiplier).
// A base ≤ 0 or a negative field is an error naming the value.
func EffectiveTimeout(base time.Duration, s RequestShape) (time.Duration, error) {
	if base <= 0 {
		return 0, fmt.Errorf("adaptive timeout: base timeout must be positive, got %s", base)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"body chars", s.BodyChars}, {"max tokens", s.MaxTokens}, {"messages", s.Messages}} {
		if f.v < 0 {
			return 0, fmt.Errorf("adaptive timeout: %s must not be negative, got %d", f.name, f.v)
		}
	}
	points := s.Messages
	if s.StrictSchema {
		points += 2
	}
	if s.ResponseHealing {
		points++
	}
	pressure := max(1,
		float64(s.BodyChars)/BaselineBodyChars,
		float64(s.MaxTokens)/BaselineMaxTokens,
		float64(points)/BaselinePoints)
	steps := math.Ceil(math.Log2(pressure))
	multiplier := int64(MaxMultiplier)
	if steps < 3 { // 2^3 = MaxMultiplier
		multiplier = min(int64(MaxMultiplier), int64(1)<<int(steps))
	}
	if base >= TimeoutCeiling || time.Duration(multiplier) > TimeoutCeiling/base {
		return TimeoutCeiling, nil
	}
	return min(TimeoutCeiling, base*time.Duration(multiplier)), nil
}
