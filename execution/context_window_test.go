package execution

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestContextLengthFailsOverToALargerWindow: a request a route refuses as
// too long for its context (400 context_length_exceeded, or 413) is not
// retried; it fails over only to a later route with a larger known
// ContextWindow, skipping smaller and unknown ones, and fails where none
// is larger, with no call more (REFERENCE B9).
func TestContextLengthFailsOverToALargerWindow(t *testing.T) {
	t.Parallel()
	tooLong := step{Status: 400, Code: "context_length_exceeded"}
	tests := []struct {
		name    string
		windows []int // per route: r0 refuses (tooLong or 413), the others answer
		refusal step
		want    []string
		calls   []int
	}{
		{"to the larger window, past a smaller one", []int{8_000, 4_000, 128_000}, tooLong,
			[]string{"r0:primary:bad_request:failover", "r2:failover:success:done"}, []int{1, 0, 1}},
		{"413 too", []int{8_000, 128_000}, step{Status: 413}, []string{"r0:primary:bad_request:failover", "r1:failover:success:done"}, []int{1, 1}},
		{"an unknown window is not larger", []int{8_000, 0}, tooLong, []string{"r0:primary:bad_request:fail"}, []int{1, 0}},
		{"from an unknown window to a known one", []int{0, 32_000}, tooLong, []string{"r0:primary:bad_request:failover", "r1:failover:success:done"}, []int{1, 1}},
		{"no window anywhere: as before, no failover", []int{0, 0}, tooLong, []string{"r0:primary:bad_request:fail"}, []int{1, 0}},
		{"another bad request never fails over", []int{8_000, 128_000}, step{Status: 400, Code: "invalid_request"}, []string{"r0:primary:bad_request:fail"}, []int{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				routes, fakes := windowRoutes(tt.windows, tt.refusal)
				res := mustNew(t, routes, policy(nil), Options{}).Run(t.Context(), testItems(1), nil)[0]
				if diff := cmp.Diff(tt.want, kinds(res.Attempts)); diff != "" {
					t.Errorf("attempts (-want +got):\n%s", diff)
				}
				var calls []int
				for _, f := range fakes {
					calls = append(calls, f.count())
				}
				if diff := cmp.Diff(tt.calls, calls); diff != "" {
					t.Errorf("calls per route (-want +got):\n%s", diff)
				}
				if done := res.Status == StatusDone; done != (tt.want[len(tt.want)-1] != "r0:primary:bad_request:fail") {
					t.Errorf("item %s (%s)", res.Status, res.Class)
				}
			})
		})
	}
}

// isContextLength reads the provider's code, or a 413, and nothing else.
func TestIsContextLength(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]bool{
		&ProviderError{Status: 400, Code: "context_length_exceeded"}: true,
		&ProviderError{Status: 400, Code: "Tokens_Exceeded"}:         true,
		&ProviderError{Status: 413}:                                  true,
		&ProviderError{Status: 400, Code: "invalid_request"}:         false,
		&ProviderError{Status: 500}:                                  false,
		&TimeoutError{Route: "r"}:                                    false,
	} {
		if got := isContextLength(err); got != want {
			t.Errorf("isContextLength(%v) = %v, want %v", err, got, want)
		}
	}
}

// TestTooLongSkipsToALargerWindow: a request that cannot fit a route's
// known context window (a quarter of its characters plus max_tokens) goes
// straight to a later route with a larger one, the skip recorded as an
// attempt not sent (context_window); with no larger route it is sent, and
// the provider decides.
func TestTooLongSkipsToALargerWindow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		windows []int
		want    []string
		calls   []int
	}{
		{"skipped to the larger window", []int{2_000, 128_000}, []string{"r0:primary:rejected:failover", "r1:failover:success:done"}, []int{0, 1}},
		{"sent where no route is larger", []int{2_000, 0}, []string{"r0:primary:success:done"}, []int{1, 0}},
		{"sent when it fits", []int{64_000, 128_000}, []string{"r0:primary:success:done"}, []int{1, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				routes, fakes := windowRoutes(tt.windows, step{Delay: time.Second})
				items := testItems(1)
				items[0].Request.Messages[1].Content = strings.Repeat("x := f(y)\n", 2_000) // 20,000 characters
				res := mustNew(t, routes, policy(nil), Options{}).Run(t.Context(), items, nil)[0]
				if diff := cmp.Diff(tt.want, kinds(res.Attempts)); diff != "" {
					t.Errorf("attempts (-want +got):\n%s", diff)
				}
				if a := res.Attempts[0]; a.Class == ClassRejected && (a.Reason != ReasonContextWindow || !strings.Contains(a.Err.Error(), "context_window is 2000")) {
					t.Errorf("the skip: reason %q, error %v", a.Reason, a.Err)
				}
				for i, f := range fakes {
					if f.count() != tt.calls[i] {
						t.Errorf("route %d: %d calls, want %d", i, f.count(), tt.calls[i])
					}
				}
			})
		})
	}
}

// windowRoutes are routes r0, r1, ... with the given context windows; r0
// answers first, the others after a second.
func windowRoutes(windows []int, first step) ([]Route, []*fakeProvider) {
	t0 := time.Now()
	var routes []Route
	var fakes []*fakeProvider
	for i, w := range windows {
		s := step{Delay: time.Second}
		if i == 0 {
			s = first
		}
		f := newFake("r"+string(rune('0'+i)), t0, always(s))
		rt := route(f.name, f)
		rt.ContextWindow = w
		routes, fakes = append(routes, rt), append(fakes, f)
	}
	return routes, fakes
}
