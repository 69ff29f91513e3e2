// Package telemetry owns warden's OpenTelemetry: it turns a finished
// review.Report into OTLP traces (review → work item → attempt, with the
// GenAI semantic-convention attributes and warden's own) and metrics
// (attempt duration and time to first token by route; timeouts, retries,
// failovers, breaker transitions and reviews by outcome), and sends them to
// a collector.
//
// Telemetry is emitted from the report's records, not from hooks inside the
// engine: every attempt records when it started (relative to the review's
// start) and how long it took, and OpenTelemetry spans take explicit start
// and end times. So the engine stays free of telemetry, a review without
// telemetry pays nothing for it, and the spans say exactly what the report
// says. Spans are therefore sent when the review ends, not while it runs.
//
// The package reads no environment variable itself: FromEnv builds a Config
// from the standard OTEL_* variables through the getenv its caller
// (cmd/warden) passes, and Publisher is the review.Publisher the wiring
// lists. The OpenTelemetry
// exporters underneath still honour the OTLP variables that Config does not
// set (OTEL_EXPORTER_OTLP_TIMEOUT, _COMPRESSION, _CERTIFICATE and friends),
// reading them from the process; FromEnv checks each of them first, so a
// value they cannot use is an error naming the variable, and the SDK's own
// logger writes through warden's slog logger (Start), never to standard
// error by itself.
//
// It may import review, the OpenTelemetry modules and go-logr (the SDK's
// logger interface); it must not import execution, report, cmd, go-openai
// or go-github.
package telemetry
