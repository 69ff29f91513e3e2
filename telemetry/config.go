package telemetry

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// The OTLP protocols Start accepts, as OTEL_EXPORTER_OTLP_PROTOCOL names
// them. http/json is not supported: OpenTelemetry-Go's metric exporter has
// no JSON encoding, and half the signals in one encoding would surprise.
const (
	ProtocolHTTPProtobuf = "http/protobuf" // the default
	ProtocolGRPC         = "grpc"
)

// Config says where telemetry goes. The zero value is off: Start returns an
// Exporter that does nothing. cmd/warden fills it from the standard
// variables (the names in brackets); the package reads none itself.
type Config struct {
	// Disabled turns telemetry off whatever else is set
	// [OTEL_SDK_DISABLED=true].
	Disabled bool
	// Endpoint is the collector's base URL, http:// or https://; traces go
	// to Endpoint/v1/traces and metrics to Endpoint/v1/metrics over HTTP,
	// or to its host and port over gRPC [OTEL_EXPORTER_OTLP_ENDPOINT].
	Endpoint string
	// TracesEndpoint and MetricsEndpoint, when set, are the full URLs of
	// one signal and override Endpoint for it
	// [OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT].
	// A signal with no endpoint at all is not sent.
	TracesEndpoint  string
	MetricsEndpoint string
	// Protocol is ProtocolHTTPProtobuf (when empty) or ProtocolGRPC
	// [OTEL_EXPORTER_OTLP_PROTOCOL]; anything else is an error.
	Protocol string
	// Headers go with every export, for a collector that wants a token
	// [OTEL_EXPORTER_OTLP_HEADERS, parsed with ParseKeyValues]. They are
	// sent, never logged nor recorded.
	Headers map[string]string
	// ServiceName is the resource's service.name; empty means
	// ResourceAttributes' service.name, else "warden" [OTEL_SERVICE_NAME].
	ServiceName string
	// ResourceAttributes are added to the resource
	// [OTEL_RESOURCE_ATTRIBUTES, parsed with ParseKeyValues].
	ResourceAttributes map[string]string
	// ServiceVersion is the resource's service.version (warden's version).
	ServiceVersion string
	// NoTraces and NoMetrics turn one signal off
	// [OTEL_TRACES_EXPORTER=none, OTEL_METRICS_EXPORTER=none].
	NoTraces, NoMetrics bool
	// Sampler is one of Samplers; "" samples every review
	// [OTEL_TRACES_SAMPLER]. SamplerRatio is the traceidratio samplers'
	// ratio, 0 to 1 [OTEL_TRACES_SAMPLER_ARG].
	Sampler      string
	SamplerRatio float64
	// Logger receives export errors that happen in the background; nil
	// discards them. Shutdown returns the errors of the final flush.
	Logger *slog.Logger
}

// Samplers are the OTEL_TRACES_SAMPLER values Start accepts.
var Samplers = []string{"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"}

// ConfigError is a Config that cannot be used; Start returns it before
// anything is sent. Its message names the setting and never holds a header
// value or a URL's credentials.
type ConfigError struct {
	Setting string // the variable, e.g. "OTEL_EXPORTER_OTLP_PROTOCOL"
	Problem string
}

func (e *ConfigError) Error() string { return e.Setting + ": " + e.Problem }

// enabled reports whether c asks for any signal to be sent.
func (c Config) enabled() bool {
	return !c.Disabled && (c.Endpoint != "" || c.TracesEndpoint != "" || c.MetricsEndpoint != "")
}

// endpoints resolves and checks the URL each signal is sent to; an empty
// one means that signal is off.
func (c Config) endpoints() (traces, metrics string, err error) {
	switch c.Protocol {
	case "", ProtocolHTTPProtobuf, ProtocolGRPC:
	case "http/json":
		return "", "", &ConfigError{"OTEL_EXPORTER_OTLP_PROTOCOL", `"http/json" is not supported: use http/protobuf (the default) or grpc`}
	default:
		return "", "", &ConfigError{"OTEL_EXPORTER_OTLP_PROTOCOL", fmt.Sprintf("%q is not supported: use http/protobuf (the default) or grpc", c.Protocol)}
	}
	if c.Endpoint != "" {
		if err := checkURL("OTEL_EXPORTER_OTLP_ENDPOINT", c.Endpoint); err != nil {
			return "", "", err
		}
	}
	var errs []error
	resolve := func(setting, full, path string) string {
		switch {
		case full != "":
			if err := checkURL(setting, full); err != nil {
				errs = append(errs, err)
			}
			return full
		case c.Endpoint == "":
			return ""
		case c.Protocol == ProtocolGRPC: // gRPC takes the host and port; the path is the service's
			return c.Endpoint
		default:
			return strings.TrimRight(c.Endpoint, "/") + path
		}
	}
	traces = resolve("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.TracesEndpoint, "/v1/traces")
	metrics = resolve("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", c.MetricsEndpoint, "/v1/metrics")
	if c.NoTraces {
		traces = ""
	}
	if c.NoMetrics {
		metrics = ""
	}
	if err := errors.Join(errs...); err != nil {
		return "", "", err
	}
	return traces, metrics, nil
}

// checkURL accepts an absolute http or https URL with a host. The
// exporters would silently fall back to localhost on anything else.
func checkURL(setting, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return &ConfigError{setting, "not a URL"}
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConfigError{setting, fmt.Sprintf("%q is not an absolute http or https URL", u.Redacted())}
	}
	return nil
}

// ParseKeyValues parses the list format of OTEL_EXPORTER_OTLP_HEADERS and
// OTEL_RESOURCE_ATTRIBUTES: comma-separated key=value pairs, with
// surrounding spaces trimmed and values percent-decoded. An empty string is
// an empty map. An error names the bad entry by position, never its value
// (a header may hold a token).
func ParseKeyValues(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, entry := range strings.Split(s, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, ok := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d is not key=value", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("entry %d (%s): value is not percent-encoded correctly", i+1, k)
		}
		out[k] = dv
	}
	return out, nil
}
