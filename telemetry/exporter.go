package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/org/warden/review"
)

// ShutdownTimeout is how long a caller should give Shutdown: the final
// flush of a short-lived command, also after a cancellation.
const ShutdownTimeout = 5 * time.Second

// Exporter sends reviews' telemetry to a collector. Its methods are safe for
// concurrent use, and do nothing on an Exporter for a Config that is off.
// Call Record once per finished review, then Shutdown once before exit.
type Exporter struct {
	tp *sdktrace.TracerProvider // nil: traces off
	mp *sdkmetric.MeterProvider // nil: metrics off

	reader  *sdkmetric.ManualReader
	mexp    sdkmetric.Exporter
	tracer  trace.Tracer
	metrics *instruments

	shutdownOnce sync.Once
	shutdownErr  error
}

// Start checks cfg and builds the exporters. It sends nothing and connects
// to nothing: spans and metrics go out from Record (in batches) and
// Shutdown (the rest). A Config that is off gives an Exporter that does
// nothing, at no cost; a bad one gives a *ConfigError.
//
// Start sets OpenTelemetry's global error handler to log to cfg.Logger: the
// exporters report background failures only there.
func Start(ctx context.Context, cfg Config) (*Exporter, error) {
	if !cfg.enabled() {
		return &Exporter{}, nil
	}
	tracesURL, metricsURL, err := cfg.endpoints()
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("telemetry", "err", err)
	}))
	// The SDK's own log lines (its internal logger, by default one that
	// prints to standard error) go through warden's logger too: with -v
	// they are lines of its log, else nowhere.
	otel.SetLogger(logr.FromSlogHandler(logger.Handler()))
	res, err := newResource(ctx, cfg)
	if err != nil {
		return nil, err
	}

	x := &Exporter{}
	if tracesURL != "" {
		var sexp sdktrace.SpanExporter
		if cfg.Protocol == ProtocolGRPC {
			sexp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(tracesURL), otlptracegrpc.WithHeaders(cfg.Headers))
		} else {
			sexp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(tracesURL), otlptracehttp.WithHeaders(cfg.Headers),
				otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf))
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry: trace exporter: %w", err)
		}
		x.tp = sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithSampler(cfg.sampler()),
			// Record ends every span at once: block rather than drop
			// when a large review fills the queue.
			sdktrace.WithBatcher(sexp, sdktrace.WithBlocking()),
		)
		x.tracer = x.tp.Tracer(instrumentationName, trace.WithInstrumentationVersion(cfg.ServiceVersion))
	}
	if metricsURL != "" {
		if cfg.Protocol == ProtocolGRPC {
			x.mexp, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(metricsURL), otlpmetricgrpc.WithHeaders(cfg.Headers))
		} else {
			x.mexp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(metricsURL), otlpmetrichttp.WithHeaders(cfg.Headers))
		}
		if err != nil {
			if x.tp != nil {
				_ = x.tp.Shutdown(ctx) // nothing was recorded yet
			}
			return nil, fmt.Errorf("telemetry: metric exporter: %w", err)
		}
		// A manual reader: metrics are recorded when the review ends and
		// exported once, at Shutdown; nothing runs in the background.
		x.reader = sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(x.mexp.Temporality))
		x.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(x.reader))
		x.metrics, err = newInstruments(x.mp.Meter(instrumentationName, metricVersion(cfg.ServiceVersion)))
		if err != nil {
			return nil, fmt.Errorf("telemetry: instruments: %w", err)
		}
	}
	return x, nil
}

// sampler is the trace sampler cfg names (OTEL_TRACES_SAMPLER): by
// default every review is sampled.
func (c Config) sampler() sdktrace.Sampler {
	switch c.Sampler {
	case "always_off":
		return sdktrace.NeverSample()
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(c.SamplerRatio)
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.SamplerRatio))
	case "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample())
	}
	return sdktrace.AlwaysSample()
}

// newResource describes warden to the collector: service.name,
// service.version, the OpenTelemetry SDK and cfg.ResourceAttributes. It
// reads no environment variable and records nothing about the host.
func newResource(ctx context.Context, cfg Config) (*resource.Resource, error) {
	var attrs []attribute.KeyValue
	for k, v := range cfg.ResourceAttributes {
		attrs = append(attrs, attribute.String(k, v))
	}
	name := cfg.ServiceName
	if _, ok := cfg.ResourceAttributes[string(keyServiceName)]; !ok && name == "" {
		name = defaultServiceName
	}
	if name != "" {
		attrs = append(attrs, keyServiceName.String(name))
	}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, keyServiceVersion.String(cfg.ServiceVersion))
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}

// Record emits a finished review: a span for the review (from start, for
// r.DurationMS), one per work item and one per attempt, each at the times
// the report records, and the review's metrics. start is when the review
// began, the zero of the report's start_ms. The items of one batch
// (review.Item.Request) share one request: its attempts are emitted and
// counted once, under the batch's first item, which the others link to.
// ctx may carry a parent span.
func (x *Exporter) Record(ctx context.Context, r *review.Report, start time.Time) {
	if x == nil || r == nil {
		return
	}
	if x.tracer != nil {
		x.recordSpans(ctx, r, start)
	}
	if x.metrics != nil {
		x.metrics.record(ctx, r)
	}
}

func (x *Exporter) recordSpans(ctx context.Context, r *review.Report, start time.Time) {
	at := func(ms int64) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	attrs, st := reviewAttrs(r)
	ctx, rs := x.tracer.Start(ctx, spanReview, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	rs.SetStatus(st.Code, st.Description)

	firstOf := map[int]trace.SpanContext{} // request (> 0) → its first item's span
	for i := range r.Items {
		it := &r.Items[i]
		attrs, st := itemAttrs(it)
		// An item never started (skipped at dispatch, or cancelled) has
		// start_ms 0: a mark at the review's start.
		opts := []trace.SpanStartOption{trace.WithTimestamp(at(it.StartMS)), trace.WithAttributes(attrs...)}
		first, shared := firstOf[it.Request]
		if shared {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: first}))
		}
		ictx, is := x.tracer.Start(ctx, spanItem, opts...)
		is.SetStatus(st.Code, st.Description)
		if it.Request > 0 && !shared {
			firstOf[it.Request] = is.SpanContext()
		}
		attempts := it.Attempts
		if shared {
			attempts = nil // emitted under the batch's first item
		}
		for j := range attempts {
			a := &attempts[j]
			var prev *review.Attempt
			if j > 0 {
				prev = &attempts[j-1]
			}
			attrs, st := attemptAttrs(a, prev)
			_, as := x.tracer.Start(ictx, attemptSpanName(a), trace.WithTimestamp(at(a.StartMS)),
				trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
			as.SetStatus(st.Code, st.Description)
			as.End(trace.WithTimestamp(at(a.StartMS + a.DurationMS)))
		}
		is.End(trace.WithTimestamp(at(it.StartMS + it.DurationMS)))
	}
	rs.End(trace.WithTimestamp(at(r.DurationMS)))
}

// attemptSpanName follows the GenAI conventions: "chat {model}".
func attemptSpanName(a *review.Attempt) string {
	if a.Model == "" {
		return operationChat
	}
	return operationChat + " " + a.Model
}

// Shutdown sends what Record left and closes the exporters. Give it a
// context of its own, bounded (ShutdownTimeout), not the review's: after a
// cancellation the review's context is done, and what finished is still
// worth sending. It returns the export errors; a second call does nothing.
func (x *Exporter) Shutdown(ctx context.Context) error {
	if x == nil {
		return nil
	}
	x.shutdownOnce.Do(func() { x.shutdownErr = x.flush(ctx) })
	return x.shutdownErr
}

func (x *Exporter) flush(ctx context.Context) error {
	var errs []error
	if x.tp != nil {
		// ForceFlush returns the export's error; Shutdown would only hand
		// it to the global error handler.
		err := x.tp.ForceFlush(ctx)
		if serr := x.tp.Shutdown(ctx); err == nil {
			err = serr
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("telemetry: traces: %w", err))
		}
	}
	if x.mp != nil {
		var rm metricdata.ResourceMetrics
		err := x.reader.Collect(ctx, &rm)
		if err == nil && len(rm.ScopeMetrics) > 0 {
			err = x.mexp.Export(ctx, &rm)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("telemetry: metrics: %w", err))
		}
		_ = x.mp.Shutdown(ctx) // closes the reader: nothing is left to send
		if err := x.mexp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}
