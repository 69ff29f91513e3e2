package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want string // the whole one-line error
	}{
		{"unknown top key", "version = 1\ncolour = true\n", "warden.toml:2: colour: unknown key"},
		{"unknown review key", "version = 1\n[review]\nbudget = \"15m\"\ntimeout = \"1m\"\n", "warden.toml:4: review.timeout: unknown key"},
		{"unknown route key", "[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\nmodel = \"m\"\napi_key = \"sk-123\"\n", "warden.toml:5: routes.api_key: unknown key"},
		{"bad duration", "[review]\nbudget = \"15 minutes\"\n", `warden.toml:2: review.budget: invalid duration "15 minutes" (want a Go duration such as "90s" or "5m")`},
		{"negative duration", "[retry]\nbackoff = \"-2s\"\n", `warden.toml:2: retry.backoff: invalid duration "-2s": must not be negative`},
		{"wrong type", "[review]\nmax_concurrency = \"eight\"\n", "warden.toml:2: review.max_concurrency: cannot decode TOML string into int"},
		{"unknown severity", "[review]\nfail_on = \"urgent\"\n", `warden.toml:2: review.fail_on: unknown severity "urgent" (want off, critical, high, medium, low or info)`},
		{"syntax", "version = = 1\n", "warden.toml:1: unexpected character U+003D '=' at start of value"},
		{"bad version", "version = 2\n", "warden.toml:1: version: unsupported version 2 (this warden reads version 1)"},
		{"route without model", "[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\n", "warden.toml:1: routes[0].model: missing"},
		{"second route bad url", "[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\nmodel = \"m\"\n\n[[routes]]\nname = \"b\"\nbase_url = \"ftp://x\"\nmodel = \"m\"\n", `warden.toml:6: routes[1].base_url: "ftp://x" is not an absolute http or https URL`},
		{"duplicate route", "[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\nmodel = \"m\"\n[[routes]]\nname = \"a\"\nbase_url = \"http://y\"\nmodel = \"m\"\n", `warden.toml:5: routes[1].name: duplicate route name "a"`},
		{"negative concurrency", "[review]\nmax_concurrency = -1\n", "warden.toml:2: review.max_concurrency: must be positive, got -1"},
		{"negative context window", "[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\nmodel = \"m\"\ncontext_window = -8\n",
			"warden.toml:1: routes[0].context_window: must be a number of tokens, got -8 (leave it out when unknown)"},
		{"budget too small", "[review]\nbudget = \"40s\"\n", "warden.toml:2: review.budget: 40s leaves no time to review: it must exceed review.reserve (30s) plus review.min_attempt (20s)"},
		{"hunk budget below min attempt", "[review]\nhunk_budget = \"10s\"\n", "warden.toml:2: review.hunk_budget: 10s is shorter than review.min_attempt (20s): no attempt could start"},
		{"skill without name", "[[skills]]\npaths = [\"**/*.go\"]\n", "warden.toml: skills[0].name: missing"},
		// Issue 22: no number of warden.toml is infinite or not a number.
		{"nan budget ratio", "[retry]\nbudget_ratio = nan\n", "warden.toml:2: retry.budget_ratio: must be a finite number, got NaN"},
		{"infinite cost cap", "[review]\nmax_cost_usd = inf\n", "warden.toml:2: review.max_cost_usd: must be a finite number, got +Inf"},
		{"negative infinite price", "[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\nmodel = \"m\"\nprice_output_per_mtok = -inf\n",
			"warden.toml:5: routes[0].price_output_per_mtok: must be a finite number, got -Inf"},
		{"nan cached price on the second route", "[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\nmodel = \"m\"\n[[routes]]\nname = \"b\"\nbase_url = \"http://y\"\nmodel = \"m\"\nprice_cached_input_per_mtok = nan\n",
			"warden.toml:9: routes[1].price_cached_input_per_mtok: must be a finite number, got NaN"},
		{"budget ratio above 1", "[retry]\nbudget_ratio = 1.5\n", "warden.toml:2: retry.budget_ratio: must be between 0 and 1, got 1.5"},
		{"negative price", "[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\nmodel = \"m\"\nprice_input_per_mtok = -1\n", "warden.toml:1: routes[0].price_input_per_mtok: prices must not be negative"},
		{"zero outage patience", "[retry]\noutage_patience = \"0s\"\n",
			"warden.toml:2: retry.outage_patience: a 0s outage patience would fail every item at the route's first failure: leave it out for the default (the hunk budget) or give a duration"},
		// Issue 22: request_timeout = "5s" with the default min_attempt left
		// no room for any retry, silently; now a load error naming both keys.
		{"min attempt over the request timeout", "[review]\nrequest_timeout = \"5s\"\n",
			`warden.toml: review.min_attempt: 20s does not fit inside the environment's route's 5s request deadline, which its retries share: no retry could ever start; lower it below 5s or raise the request timeout (review.request_timeout)`},
		{"min attempt over a route's request timeout", "[review]\nmin_attempt = \"40s\"\n[[routes]]\nname = \"fast\"\nbase_url = \"http://x\"\nmodel = \"m\"\nrequest_timeout = \"30s\"\n",
			`warden.toml:2: review.min_attempt: 40s does not fit inside route "fast"'s 30s request deadline, which its retries share: no retry could ever start; lower it below 30s or raise the request timeout (routes[0].request_timeout)`},
		{"min attempt and a fixed backoff over the request timeout", "[review]\nrequest_timeout = \"30s\"\n[retry]\nbackoff_schedule = [\"15s\"]\n",
			`warden.toml: review.min_attempt: 20s plus a retry's wait (15s) does not fit inside the environment's route's 30s request deadline, which its retries share: no retry could ever start; lower it below 15s or raise the request timeout (review.request_timeout)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig("warden.toml", []byte(tt.doc))
			if err == nil {
				t.Fatalf("parseConfig(%q) = nil error, want %q", tt.doc, tt.want)
			}
			if got := review.OneLine(err.Error()); got != tt.want {
				t.Errorf("parseConfig(%q) error = %q, want %q", tt.doc, got, tt.want)
			}
		})
	}
}

const fullConfig = `version = 1

[review]
budget = "10m"
hunk_budget = "7m" # holds the 5m primary and a 90s failover (issue 11)
request_timeout = "90s"
max_concurrency = 4
fail_on = "medium"
report_on = "low"
max_findings = 20

[retry]
max_per_route = 2
backoff = "1s"
rate_limit_backoff = "30s"

[[routes]]
name = "primary"
base_url = "https://openrouter.ai/api/v1"
model = "moonshotai/kimi-k2"
api_key_env = "OPENROUTER_API_KEY"
max_concurrency = 4
request_timeout = "5m"
response_healing = true

[[routes]]
name = "local"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen"

[filters]
ignore = ["docs/**"]

[[skills]]
name = "security-review"
paths = ["**/*.go"]
ignore = ["**/*_test.go"]
`

func TestParseConfigFull(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("warden.toml", []byte(fullConfig))
	if err != nil {
		t.Fatalf("parseConfig(full example) error: %v", err)
	}
	p := c.policy()
	want := execution.DefaultPolicy()
	want.Budget, want.ItemBudget, want.RequestTimeout = 10*time.Minute, 7*time.Minute, 90*time.Second
	want.MaxConcurrency, want.MaxRetriesPerRoute = 4, 2
	want.Backoff, want.RateLimitBackoff = time.Second, 30*time.Second
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("policy() mismatch (-want +got):\n%s", diff)
	}
	if len(c.Routes) != 2 || c.Routes[0].line != 17 || c.Routes[1].line != 26 || !c.Routes[0].ResponseHealing || time.Duration(c.Routes[0].RequestTimeout) != 5*time.Minute {
		t.Errorf("routes = %+v", c.Routes)
	}
	if c.Review.FailOn.v.String() != "medium" || c.Review.ReportOn.v.String() != "low" || *c.Review.MaxFindings != 20 {
		t.Errorf("review = %+v", c.Review)
	}
	if len(c.Skills) != 1 || c.Skills[0].Name != "security-review" || c.Skills[0].Ignore[0] != "**/*_test.go" {
		t.Errorf("skills = %+v", c.Skills)
	}
}

func TestEnvRoute(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name    string
		getenv  func(string) string
		want    routeConfig
		ok      bool
		wantErr string
	}{
		{"none", env(), routeConfig{}, false, ""},
		{"warden vars", env("WARDEN_BASE_URL", "http://127.0.0.1:8080/v1", "WARDEN_MODEL", "m", "WARDEN_API_KEY", "k"),
			routeConfig{Name: "env", BaseURL: "http://127.0.0.1:8080/v1", Model: "m", APIKeyEnv: "WARDEN_API_KEY"}, true, ""},
		{"warden base without model", env("WARDEN_BASE_URL", "http://x/v1"), routeConfig{}, true, "WARDEN_MODEL"},
		{"warden bad url", env("WARDEN_BASE_URL", "localhost:8080", "WARDEN_MODEL", "m"), routeConfig{}, true, "WARDEN_BASE_URL"},
		{"openai", env("OPENAI_API_KEY", "k"), routeConfig{Name: "openai", BaseURL: openAIBaseURL, Model: openAIModel, APIKeyEnv: "OPENAI_API_KEY"}, true, ""},
		{"openrouter with model", env("OPENROUTER_API_KEY", "k", "WARDEN_MODEL", "x/y"), routeConfig{Name: "openrouter", BaseURL: openRouterBaseURL, Model: "x/y", APIKeyEnv: "OPENROUTER_API_KEY"}, true, ""},
	}
	for _, tt := range tests {
		got, ok, err := envRoute(tt.getenv)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("envRoute(%s) error = %v, want one naming %s", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || ok != tt.ok || got != tt.want {
			t.Errorf("envRoute(%s) = %+v, %v, %v; want %+v, %v", tt.name, got, ok, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(fullConfig)
	f.Add("version = 1\n[review]\nbudget = \"1h\"\n")
	f.Add("[[routes]]\nname=\"a\"\n[[routes]]\n")
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := parseConfig("warden.toml", []byte(doc))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "warden.toml") {
				t.Fatalf("error does not name the file: %q", err)
			}
			return
		}
		p := c.policy()
		if p.Budget <= 0 || p.MaxConcurrency <= 0 || p.MaxRetriesPerRoute < 0 {
			t.Fatalf("accepted config gives an unusable policy %+v", p)
		}
	})
}

// TestContextWindowReachesTheEngine: [[routes]] context_window is the
// engine route's ContextWindow (0 when left out).
func TestContextWindowReachesTheEngine(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("warden.toml", []byte("[[routes]]\nname = \"small\"\nbase_url = \"http://x/v1\"\nmodel = \"m\"\ncontext_window = 8192\n\n"+
		"[[routes]]\nname = \"unknown\"\nbase_url = \"http://y/v1\"\nmodel = \"m\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	routes, err := cfg.EngineRoutes(func(string) string { return "" }, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	if routes[0].ContextWindow != 8192 || routes[1].ContextWindow != 0 {
		t.Errorf("context windows %d, %d; want 8192 and 0", routes[0].ContextWindow, routes[1].ContextWindow)
	}
}
