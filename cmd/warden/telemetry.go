package main

import (
	"context"
	"fmt"
	"os"

	"github.com/org/warden/telemetry"
)

// startTelemetry starts telemetry (the OTEL_* variables) for a review about
// to run. A bad configuration is a usage error, before anything is sent.
func startTelemetry(ctx context.Context, e *env, verbose bool) (*telemetry.Publisher, error) {
	// The TLS files are read as the exporters read them: relative to the
	// process's directory.
	cfg, err := telemetry.FromEnv(e.getenv, os.ReadFile, wardenBuild().Version, e.logger(verbose))
	if err != nil {
		return nil, &usageError{err}
	}
	x, err := telemetry.NewPublisher(ctx, cfg, func(line string) { fmt.Fprintf(e.stderr, "warden: %s\n", oneLine(line)) })
	if err != nil {
		return nil, &usageError{err}
	}
	return x, nil
}
