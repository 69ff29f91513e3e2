package telemetry

import (
	"strings"
	"testing"
)

// TestFromEnv reads the standard variables, and names the variable a
// malformed value came from.
func TestFromEnv(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"OTEL_SDK_DISABLED":           " TRUE ",
		"OTEL_EXPORTER_OTLP_ENDPOINT": " http://127.0.0.1:4318 ",
		"OTEL_SERVICE_NAME":           "svc",
		"OTEL_EXPORTER_OTLP_HEADERS":  "a=b",
	}
	cfg, err := FromEnv(func(k string) string { return vars[k] }, nil, "1.2.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Disabled || cfg.Endpoint != "http://127.0.0.1:4318" || cfg.ServiceName != "svc" || cfg.ServiceVersion != "1.2.3" || cfg.Headers["a"] != "b" {
		t.Errorf("FromEnv = %+v", cfg)
	}
	vars["OTEL_RESOURCE_ATTRIBUTES"] = "novalue"
	if _, err := FromEnv(func(k string) string { return vars[k] }, nil, "", nil); err == nil || !strings.HasPrefix(err.Error(), "OTEL_RESOURCE_ATTRIBUTES: ") {
		t.Errorf("FromEnv(bad attributes) error = %v, want one naming OTEL_RESOURCE_ATTRIBUTES", err)
	}
}
