package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/org/warden/review"
)

// FromEnv reads the standard OpenTelemetry variables through getenv.
// Telemetry is off unless an OTLP endpoint is set; OTEL_SDK_DISABLED=true
// turns it off whatever else is set. A malformed variable is an error
// naming it.
func FromEnv(getenv func(string) string, version string, logger *slog.Logger) (Config, error) {
	cfg := Config{
		Disabled:        strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true"),
		Endpoint:        strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")),
		TracesEndpoint:  strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
		MetricsEndpoint: strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")),
		Protocol:        strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")),
		ServiceName:     strings.TrimSpace(getenv("OTEL_SERVICE_NAME")),
		ServiceVersion:  version,
		Logger:          logger,
	}
	var err error
	if cfg.Headers, err = ParseKeyValues(getenv("OTEL_EXPORTER_OTLP_HEADERS")); err != nil {
		return cfg, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %w", err)
	}
	if cfg.ResourceAttributes, err = ParseKeyValues(getenv("OTEL_RESOURCE_ATTRIBUTES")); err != nil {
		return cfg, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return cfg, nil
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
