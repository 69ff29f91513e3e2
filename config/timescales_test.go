package config

import (
	"errors"
	"strings"
	"testing"
)

// TestComposedTimeScales: an impossible combination of budgets and route
// settings is one error naming the key, its line and the numbers.
func TestComposedTimeScales(t *testing.T) {
	t.Parallel()
	route := "\n[[routes]]\nname = \"slow\"\nbase_url = \"http://127.0.0.1:4000/v1\"\nmodel = \"m\"\n"
	tests := []struct {
		name, toml, want string
	}{
		{"profile in the default hunk budget", "version = 1\n" + route + "profile = \"litellm\"\n",
			`x.toml: review.hunk_budget: 5m0s cannot hold route "slow": 3 attempts × 5m0s + 1m0s backoff`},
		{"short hunk budget", "[review]\nhunk_budget = \"3m\"\n" + route + strings.Replace(route, `"slow"`, `"slow2"`, 1),
			`x.toml:2: review.hunk_budget: 3m0s cannot hold route "slow": 1 attempt × 2m0s (its retries share it) + 2m0s failover to "slow2"`},
		{"breaker window", "version = 1\n" + route + "breaker_window = \"1m\"\n",
			`x.toml:7: routes[0].breaker_window: 1m0s is shorter than twice route "slow"'s longest attempt (5m0s)`},
		{"unknown profile", "version = 1\n" + route + "profile = \"fast\"\n",
			`x.toml:3: routes[0].profile: unknown profile "fast" (want "litellm" or "litellm-aux")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("x.toml", []byte(tt.toml))
			var ce *configError
			if !errors.As(err, &ce) || err.Error() != tt.want {
				t.Errorf("Parse = %v\nwant %s", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}
