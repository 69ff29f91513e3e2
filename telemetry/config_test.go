package telemetry

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEndpoints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                    string
		cfg                     Config
		wantTraces, wantMetrics string
		wantErr                 string
		wantEnabled             bool
	}{
		{name: "off", cfg: Config{}},
		{name: "base", cfg: Config{Endpoint: "http://127.0.0.1:4318"},
			wantTraces: "http://127.0.0.1:4318/v1/traces", wantMetrics: "http://127.0.0.1:4318/v1/metrics", wantEnabled: true},
		{name: "base with a path prefix", cfg: Config{Endpoint: "https://otlp.example/otlp/", Protocol: "http/protobuf"},
			wantTraces: "https://otlp.example/otlp/v1/traces", wantMetrics: "https://otlp.example/otlp/v1/metrics", wantEnabled: true},
		{name: "signal endpoints win", cfg: Config{Endpoint: "http://a:4318", TracesEndpoint: "http://b:4318/custom"},
			wantTraces: "http://b:4318/custom", wantMetrics: "http://a:4318/v1/metrics", wantEnabled: true},
		{name: "traces only", cfg: Config{TracesEndpoint: "http://b:4318/v1/traces"},
			wantTraces: "http://b:4318/v1/traces", wantEnabled: true},
		{name: "grpc takes the host", cfg: Config{Endpoint: "http://c:4317", Protocol: "grpc"},
			wantTraces: "http://c:4317", wantMetrics: "http://c:4317", wantEnabled: true},
		{name: "disabled", cfg: Config{Endpoint: "http://a:4318", Disabled: true},
			wantTraces: "http://a:4318/v1/traces", wantMetrics: "http://a:4318/v1/metrics"},
		{name: "http/json", cfg: Config{Endpoint: "http://a:4318", Protocol: "http/json"}, wantEnabled: true,
			wantErr: `OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" is not supported: use http/protobuf (the default) or grpc`},
		{name: "unknown protocol", cfg: Config{Endpoint: "http://a:4318", Protocol: "thrift"}, wantEnabled: true,
			wantErr: `OTEL_EXPORTER_OTLP_PROTOCOL: "thrift" is not supported: use http/protobuf (the default) or grpc`},
		{name: "no scheme", cfg: Config{Endpoint: "collector:4318"}, wantEnabled: true,
			wantErr: `OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" is not an absolute http or https URL`},
		{name: "credentials never shown", cfg: Config{TracesEndpoint: "ftp://user:hunter2@host/x"}, wantEnabled: true,
			wantErr: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://user:xxxxx@host/x" is not an absolute http or https URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.cfg.enabled(); got != tt.wantEnabled {
				t.Errorf("enabled() = %v, want %v", got, tt.wantEnabled)
			}
			traces, metrics, err := tt.cfg.endpoints()
			if tt.wantErr != "" {
				var ce *ConfigError
				if !errors.As(err, &ce) || err.Error() != tt.wantErr {
					t.Fatalf("endpoints() error = %v, want *ConfigError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("endpoints() error = %v", err)
			}
			if traces != tt.wantTraces || metrics != tt.wantMetrics {
				t.Errorf("endpoints() = %q, %q; want %q, %q", traces, metrics, tt.wantTraces, tt.wantMetrics)
			}
		})
	}
}

func TestParseKeyValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{"", map[string]string{}, ""},
		{"api-key=abc", map[string]string{"api-key": "abc"}, ""},
		{" Authorization = Bearer%20tok%3D , x=1,", map[string]string{"Authorization": "Bearer tok=", "x": "1"}, ""},
		{"a=b=c", map[string]string{"a": "b=c"}, ""},
		{"ok=1,secret-only", nil, "entry 2 is not key=value"},
		{"=v", nil, "entry 1 is not key=value"},
		{"k=%zz-SECRET", nil, "entry 1 (k): value is not percent-encoded correctly"},
	}
	for _, tt := range tests {
		got, err := ParseKeyValues(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseKeyValues(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Errorf("ParseKeyValues(%q) error %q shows the value", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseKeyValues(%q) error = %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseKeyValues(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}
