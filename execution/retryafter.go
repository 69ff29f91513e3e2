package execution

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfterCeiling is the largest wait ParseRetryAfter reports: a larger
// (or overflowing) value is reported as RetryAfterCeiling, which is still far
// beyond any budget, so the caller cools the route down instead of waiting.
const RetryAfterCeiling = 24 * time.Hour

// ParseRetryAfter returns how long the server asked us to wait before the
// next request, and whether it said so. The sources, in priority order:
//
//  1. the retry-after-ms header: milliseconds, integer or float;
//  2. the Retry-After header: delta-seconds, integer or float, or an HTTP-date
//     (http.ParseTime; a date in the past means 0);
//  3. OpenRouter's error metadata, metadata["headers"]["X-RateLimit-Reset"]:
//     the reset time in milliseconds since the Unix epoch, as a string or a
//     number; the wait is the time until then (0 when past).
//
// A source whose value is negative, NaN, infinite or unparsable is ignored
// and the next one is tried; when none is usable the result is (0, false).
// Waits above RetryAfterCeiling are reported as RetryAfterCeiling. h and
// metadata may be nil.
func ParseRetryAfter(h http.Header, metadata map[string]any, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, ok := parseNonNegative(v); ok {
			return fromSeconds(ms / 1000), true
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, ok := parseNonNegative(v); ok {
			return fromSeconds(s), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return until(t, now), true
		}
	}
	if ms, ok := rateLimitReset(metadata); ok {
		return untilUnixMilli(ms, now), true
	}
	return 0, false
}

// parseNonNegative parses a finite, non-negative decimal number.
func parseNonNegative(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	return f, true
}

// fromSeconds converts a non-negative number of seconds to a Duration,
// without overflow.
func fromSeconds(s float64) time.Duration {
	if s >= RetryAfterCeiling.Seconds() {
		return RetryAfterCeiling
	}
	return time.Duration(s * float64(time.Second))
}

// until is the time from now to t, 0 when t is past, at most
// RetryAfterCeiling.
func until(t, now time.Time) time.Duration {
	if !t.After(now) {
		return 0
	}
	if t.After(now.Add(RetryAfterCeiling)) {
		return RetryAfterCeiling
	}
	return t.Sub(now)
}

// untilUnixMilli is until for a time in milliseconds since the epoch.
func untilUnixMilli(ms float64, now time.Time) time.Duration {
	d := ms - float64(now.UnixMilli())
	if d <= 0 {
		return 0
	}
	if d >= float64(RetryAfterCeiling.Milliseconds()) {
		return RetryAfterCeiling
	}
	return until(time.UnixMilli(int64(ms)), now)
}

// rateLimitReset reads metadata["headers"]["X-RateLimit-Reset"] (the header
// name compared case-insensitively), a string or a JSON number.
func rateLimitReset(metadata map[string]any) (float64, bool) {
	headers, ok := metadata["headers"].(map[string]any)
	if !ok {
		return 0, false
	}
	for k, v := range headers {
		if !strings.EqualFold(k, "X-RateLimit-Reset") {
			continue
		}
		switch v := v.(type) {
		case string:
			return parseNonNegative(v)
		case json.Number:
			return parseNonNegative(v.String())
		case float64:
			return nonNegative(v)
		case int:
			return nonNegative(float64(v))
		case int64:
			return nonNegative(float64(v))
		}
		return 0, false
	}
	return 0, false
}

func nonNegative(f float64) (float64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	return f, true
}
