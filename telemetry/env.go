package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/org/warden/review"
)

// FromEnv reads the standard OpenTelemetry variables through getenv, and
// the TLS files they name through readFile. Telemetry is off unless an
// OTLP endpoint is set; OTEL_SDK_DISABLED=true turns it off whatever else
// is set. When it is on, every variable the SDK and its exporters would
// read themselves is checked first (checkSDKVars), so that a value they
// cannot use is an error naming it, never a raw SDK log line or a silent
// default. A malformed variable is an error naming it; with several, one
// error names them all.
func FromEnv(getenv func(string) string, readFile func(string) ([]byte, error), version string, logger *slog.Logger) (Config, error) {
	cfg := Config{
		Endpoint:        strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")),
		TracesEndpoint:  strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
		MetricsEndpoint: strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")),
		Protocol:        strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")),
		ServiceName:     strings.TrimSpace(getenv("OTEL_SERVICE_NAME")),
		ServiceVersion:  version,
		Logger:          logger,
	}
	var errs configErrors
	switch v := strings.TrimSpace(getenv("OTEL_SDK_DISABLED")); strings.ToLower(v) {
	case "true":
		cfg.Disabled = true
	case "", "false":
	default:
		errs = append(errs, &ConfigError{"OTEL_SDK_DISABLED", fmt.Sprintf("%q is not true or false", v)})
	}
	var err error
	if cfg.Headers, err = ParseKeyValues(getenv("OTEL_EXPORTER_OTLP_HEADERS")); err != nil {
		errs = append(errs, &ConfigError{"OTEL_EXPORTER_OTLP_HEADERS", err.Error()})
	}
	if cfg.ResourceAttributes, err = ParseKeyValues(getenv("OTEL_RESOURCE_ATTRIBUTES")); err != nil {
		errs = append(errs, &ConfigError{"OTEL_RESOURCE_ATTRIBUTES", err.Error()})
	}
	if cfg.enabled() {
		errs = append(errs, readSignals(getenv, &cfg)...)
		errs = append(errs, readSampler(getenv, &cfg)...)
		if err := checkSDKVars(getenv, readFile, cfg.Protocol); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return cfg, errs
	}
	return cfg, nil
}

// configErrors are several configuration errors as one, on one line.
type configErrors []error

func (e configErrors) Error() string {
	var msgs []string
	for _, err := range e {
		msgs = append(msgs, err.Error())
	}
	return strings.Join(msgs, "; ")
}

func (e configErrors) Unwrap() []error { return e }

// readSignals reads OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER: otlp
// (the default) or none, which turns that signal off. Exporters warden
// does not have (console, zipkin, prometheus, ...) are errors, not
// ignored.
func readSignals(getenv func(string) string, cfg *Config) []error {
	var errs []error
	for _, s := range []struct {
		name string
		off  *bool
	}{{"OTEL_TRACES_EXPORTER", &cfg.NoTraces}, {"OTEL_METRICS_EXPORTER", &cfg.NoMetrics}} {
		v := strings.TrimSpace(getenv(s.name))
		if v == "" {
			continue
		}
		var otlp, none bool
		for _, e := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(e)) {
			case "otlp":
				otlp = true
			case "none":
				none = true
			default:
				errs = append(errs, &ConfigError{s.name, fmt.Sprintf("%q is not supported: warden exports otlp, or none", strings.TrimSpace(e))})
			}
		}
		*s.off = none && !otlp
	}
	return errs
}

// readSampler reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (the
// ratio of the traceidratio samplers, 0 to 1, default 1).
func readSampler(getenv func(string) string, cfg *Config) []error {
	cfg.Sampler = strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	cfg.SamplerRatio = 1
	if !slices.Contains(Samplers, cfg.Sampler) && cfg.Sampler != "" {
		return []error{&ConfigError{"OTEL_TRACES_SAMPLER", fmt.Sprintf("%q is not %s", getenv("OTEL_TRACES_SAMPLER"), orList(Samplers))}}
	}
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	if arg == "" || !strings.HasSuffix(cfg.Sampler, "traceidratio") {
		return nil
	}
	r, err := strconv.ParseFloat(arg, 64)
	if err != nil || r < 0 || r > 1 {
		return []error{&ConfigError{"OTEL_TRACES_SAMPLER_ARG", fmt.Sprintf("%q is not a ratio from 0 to 1", arg)}}
	}
	cfg.SamplerRatio = r
	return nil
}

// Publisher is one review's telemetry as a review.Publisher: started
// before the review (the zero of its attempts' start_ms), fed the report
// after it, flushed before the command returns.
type Publisher struct {
	x     *Exporter
	start time.Time
	warn  func(line string)
}

// NewPublisher starts an exporter for a review about to run. warn receives
// each line of an export failure (the caller folds and neutralises it).
func NewPublisher(ctx context.Context, cfg Config, warn func(line string)) (*Publisher, error) {
	x, err := Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Publisher{x: x, start: time.Now(), warn: warn}, nil
}

// Publish records the report and flushes, with a context of its own
// (bounded, and alive after a cancellation of the review's): what finished
// is sent. An export failure goes to warn, never a reason to fail the
// review: Publish returns nil.
func (t *Publisher) Publish(ctx context.Context, rep *review.Report) error {
	if rep != nil {
		t.x.Record(context.WithoutCancel(ctx), rep, t.start)
	}
	flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := t.x.Shutdown(flush); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") { // one per signal
			t.warn(line)
		}
	}
	return nil
}
