package execution

import (
	"math"
	"net/http"
	"testing"
	"time"
)

// FuzzParseRetryAfter feeds arbitrary header and metadata values: the parser
// never panics, never returns a negative wait, and never one above
// RetryAfterCeiling (so a hostile "Retry-After: 1e300" cannot stall a review).
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "2.5", "0", "-1", "abc", "Wed, 21 Oct 2015 07:28:00 GMT", "1e300", "NaN", "+Inf", "99999999999999999999"} {
		f.Add(s, s, s)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ra, raMS, reset string) {
		h := http.Header{}
		if ra != "" {
			h.Set("Retry-After", ra)
		}
		if raMS != "" {
			h.Set("Retry-After-Ms", raMS)
		}
		meta := map[string]any{"headers": map[string]any{"X-RateLimit-Reset": reset}}
		d, ok := ParseRetryAfter(h, meta, now)
		if !ok {
			return
		}
		if d < 0 || d > RetryAfterCeiling || math.IsNaN(float64(d)) {
			t.Fatalf("ParseRetryAfter(%q, %q, %q) = %v", ra, raMS, reset, d)
		}
	})
}
