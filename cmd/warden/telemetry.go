package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/org/warden/review"
	"github.com/org/warden/telemetry"
)

// telemetryConfig reads the standard OpenTelemetry variables. Telemetry is
// off unless an OTLP endpoint is set; OTEL_SDK_DISABLED=true turns it off
// whatever else is set.
func telemetryConfig(getenv func(string) string, logger *slog.Logger) (telemetry.Config, error) {
	cfg := telemetry.Config{
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
	if cfg.Headers, err = telemetry.ParseKeyValues(getenv("OTEL_EXPORTER_OTLP_HEADERS")); err != nil {
		return cfg, usagef("OTEL_EXPORTER_OTLP_HEADERS: %v", err)
	}
	if cfg.ResourceAttributes, err = telemetry.ParseKeyValues(getenv("OTEL_RESOURCE_ATTRIBUTES")); err != nil {
		return cfg, usagef("OTEL_RESOURCE_ATTRIBUTES: %v", err)
	}
	return cfg, nil
}

// reviewTelemetry is one review's telemetry: started before the review,
// fed the report after it, flushed before the command returns.
type reviewTelemetry struct {
	x      *telemetry.Exporter
	start  time.Time
	stderr func(format string, args ...any)
}

// startTelemetry starts telemetry for a review about to run, and marks its
// start (the zero of its attempts' start_ms). A bad configuration is a
// usage error, before anything is sent.
func startTelemetry(ctx context.Context, e *env, verbose bool) (*reviewTelemetry, error) {
	logger := slog.New(slog.DiscardHandler)
	if verbose {
		logger = slog.New(slog.NewTextHandler(e.stderr, nil))
	}
	cfg, err := telemetryConfig(e.getenv, logger)
	if err != nil {
		return nil, err
	}
	x, err := telemetry.Start(ctx, cfg)
	if err != nil {
		return nil, &usageError{err}
	}
	return &reviewTelemetry{x: x, start: time.Now(), stderr: func(f string, a ...any) { fmt.Fprintf(e.stderr, f, a...) }}, nil
}

// Publish records the report and flushes, with a context of its own
// (bounded, and alive after a cancellation of the review's): what finished
// is sent. An export failure is reported on standard error, never a reason
// to fail the review: Publish returns nil.
func (t *reviewTelemetry) Publish(ctx context.Context, rep *review.Report) error {
	if rep != nil {
		t.x.Record(context.WithoutCancel(ctx), rep, t.start)
	}
	flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetry.ShutdownTimeout)
	defer cancel()
	if err := t.x.Shutdown(flush); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") { // one per signal
			t.stderr("warden: %s\n", oneLine(line))
		}
	}
	return nil
}
