package execution

import (
	"strings"
	"testing"
	"time"
)

func TestEffectiveTimeout(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	tests := []struct {
		name  string
		base  time.Duration
		shape RequestShape
		want  time.Duration
	}{
		{"zero shape keeps base", 2 * m, RequestShape{}, 2 * m},
		{"body at baseline", 2 * m, RequestShape{BodyChars: 8000}, 2 * m},
		{"body just above baseline", 2 * m, RequestShape{BodyChars: 8001}, 4 * m},
		{"body at two baselines", 2 * m, RequestShape{BodyChars: 16000}, 4 * m},
		{"body just above two baselines", 2 * m, RequestShape{BodyChars: 16001}, 8 * m},
		{"body above four baselines hits ceiling", 2 * m, RequestShape{BodyChars: 32001}, 10 * m},
		{"body above four baselines small base", 30 * time.Second, RequestShape{BodyChars: 32001}, 4 * m},
		{"cap at 8x", 10 * time.Second, RequestShape{BodyChars: 8000 * 1000}, 80 * time.Second},
		{"tokens at baseline", m, RequestShape{MaxTokens: 6000}, m},
		{"tokens just above baseline", m, RequestShape{MaxTokens: 6001}, 2 * m},
		{"tokens above two baselines", m, RequestShape{MaxTokens: 12001}, 4 * m},
		{"four messages at baseline", m, RequestShape{Messages: 4}, m},
		{"five messages", m, RequestShape{Messages: 5}, 2 * m},
		{"two messages strict schema", m, RequestShape{Messages: 2, StrictSchema: true}, m},
		{"two messages strict schema healing", m, RequestShape{Messages: 2, StrictSchema: true, ResponseHealing: true}, 2 * m},
		{"nine points", m, RequestShape{Messages: 9}, 4 * m},
		{"seventeen points", m, RequestShape{Messages: 17}, 8 * m},
		{"largest ratio wins", m, RequestShape{BodyChars: 8001, MaxTokens: 24001, Messages: 1}, 8 * m},
		{"base above ceiling", 11 * m, RequestShape{}, 10 * m},
		{"base at ceiling", 10 * m, RequestShape{BodyChars: 9000}, 10 * m},
		{"huge base does not overflow", time.Duration(1 << 62), RequestShape{BodyChars: 1 << 40}, 10 * m},
		{"one nanosecond", 1, RequestShape{}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := EffectiveTimeout(tt.base, tt.shape)
			if err != nil {
				t.Fatalf("EffectiveTimeout(%v, %+v) error: %v", tt.base, tt.shape, err)
			}
			if got != tt.want {
				t.Errorf("EffectiveTimeout(%v, %+v) = %v, want %v", tt.base, tt.shape, got, tt.want)
			}
		})
	}
}

func TestEffectiveTimeoutBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base    time.Duration
		shape   RequestShape
		mention string
	}{
		{0, RequestShape{}, "base timeout"},
		{-time.Second, RequestShape{}, "base timeout"},
		{time.Minute, RequestShape{BodyChars: -1}, "body chars"},
		{time.Minute, RequestShape{MaxTokens: -1}, "max tokens"},
		{time.Minute, RequestShape{Messages: -1}, "messages"},
	}
	for _, tt := range tests {
		got, err := EffectiveTimeout(tt.base, tt.shape)
		if err == nil || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("EffectiveTimeout(%v, %+v) = %v, %v; want an error mentioning %q", tt.base, tt.shape, got, err, tt.mention)
		}
	}
}
