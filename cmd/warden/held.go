package main

import (
	"strings"

	"github.com/org/warden/secrets"
	"github.com/org/warden/telemetry"
)

// heldVariables hold tokens warden may have besides the configuration's
// model keys: the Action's token and results-cache secret, and the token
// in GITHUB_TOKEN a workflow may set.
var heldVariables = []string{"INPUT_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "INPUT_RESULTS_CACHE_SECRET", "INPUT_STATE_SECRET"}

// held are the tokens of the process that no request to a model may carry
// (the configuration adds its route keys): heldVariables, and the values
// of the OTLP exporter's headers, with a header's credential on its own
// too ("Bearer TOKEN": TOKEN).
func (e *env) held() []secrets.Value {
	var vs []secrets.Value
	for _, name := range heldVariables {
		vs = append(vs, secrets.Held(name, e.getenv(name)))
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"} {
		headers, err := telemetry.ParseKeyValues(e.getenv(name))
		if err != nil {
			continue // startTelemetry reports it
		}
		for k, v := range headers {
			vs = append(vs, secrets.Held(name+" "+k, v))
			if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				vs = append(vs, secrets.Held(name+" "+k, cred))
			}
		}
	}
	return vs
}
