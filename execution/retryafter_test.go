package execution

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	reset := func(v any) map[string]any {
		return map[string]any{"headers": map[string]any{"X-RateLimit-Limit": "20", "X-RateLimit-Reset": v}}
	}
	nowMs := now.UnixMilli()
	type result struct {
		D  time.Duration
		OK bool
	}
	tests := []struct {
		name     string
		h        http.Header
		metadata map[string]any
		want     result
	}{
		{"none", nil, nil, result{0, false}},
		{"seconds", header("Retry-After", "3"), nil, result{3 * time.Second, true}},
		{"float seconds", header("Retry-After", "2.5"), nil, result{2500 * time.Millisecond, true}},
		{"zero", header("Retry-After", "0"), nil, result{0, true}},
		{"spaces", header("Retry-After", " 7 "), nil, result{7 * time.Second, true}},
		{"negative ignored", header("Retry-After", "-1"), nil, result{0, false}},
		{"garbage ignored", header("Retry-After", "abc"), nil, result{0, false}},
		{"NaN ignored", header("Retry-After", "NaN"), nil, result{0, false}},
		{"Inf ignored", header("Retry-After", "+Inf"), nil, result{0, false}},
		{"date 10s ahead", header("Retry-After", now.Add(10*time.Second).Format(http.TimeFormat)), nil, result{10 * time.Second, true}},
		{"RFC 850 date", header("Retry-After", now.Add(10*time.Second).Format(time.RFC850)), nil, result{10 * time.Second, true}},
		{"past date", header("Retry-After", now.Add(-time.Hour).Format(http.TimeFormat)), nil, result{0, true}},
		{"retry-after-ms", header("retry-after-ms", "1500"), nil, result{1500 * time.Millisecond, true}},
		{"retry-after-ms float", header("retry-after-ms", "12.5"), nil, result{12500 * time.Microsecond, true}},
		{"retry-after-ms wins", header("retry-after-ms", "1500", "Retry-After", "3"), nil, result{1500 * time.Millisecond, true}},
		{"bad retry-after-ms falls back", header("retry-after-ms", "soon", "Retry-After", "3"), nil, result{3 * time.Second, true}},
		{"header wins over metadata", header("Retry-After", "3"), reset(strconv.FormatInt(nowMs+4000, 10)), result{3 * time.Second, true}},
		{"reset string", nil, reset(strconv.FormatInt(nowMs+4000, 10)), result{4 * time.Second, true}},
		{"reset number", nil, reset(float64(nowMs + 4000)), result{4 * time.Second, true}},
		{"reset json.Number", nil, reset(json.Number(strconv.FormatInt(nowMs+4000, 10))), result{4 * time.Second, true}},
		{"reset int64", nil, reset(nowMs + 4000), result{4 * time.Second, true}},
		{"reset lower-case key", nil, map[string]any{"headers": map[string]any{"x-ratelimit-reset": strconv.FormatInt(nowMs+4000, 10)}}, result{4 * time.Second, true}},
		{"reset past", nil, reset(float64(nowMs - 4000)), result{0, true}},
		{"reset garbage", nil, reset("tomorrow"), result{0, false}},
		{"reset negative", nil, reset(float64(-5)), result{0, false}},
		{"reset wrong type", nil, reset(true), result{0, false}},
		{"metadata without headers", nil, map[string]any{"provider_name": "x"}, result{0, false}},
		{"huge seconds", header("Retry-After", "99999999999999999999"), nil, result{RetryAfterCeiling, true}},
		{"huge float seconds", header("Retry-After", "1e300"), nil, result{RetryAfterCeiling, true}},
		{"huge ms", header("retry-after-ms", "1e300"), nil, result{RetryAfterCeiling, true}},
		{"3600 kept", header("Retry-After", "3600"), nil, result{time.Hour, true}},
		{"huge reset", nil, reset("1e300"), result{RetryAfterCeiling, true}},
		{"far date", header("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"), nil, result{RetryAfterCeiling, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, ok := ParseRetryAfter(tt.h, tt.metadata, now)
			if got := (result{d, ok}); got != tt.want {
				t.Errorf("ParseRetryAfter(%v, %v, now) = %v, want %v", tt.h, tt.metadata, got, tt.want)
			}
		})
	}
}
