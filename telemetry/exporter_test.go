package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/org/warden/internal/fakeotlp"
)

const collectorToken = "collector-token-SECRET-4d2f"

// exportFixture records the fixture report into a fresh loopback
// collector and returns it.
func exportFixture(t *testing.T) *fakeotlp.Collector {
	t.Helper()
	c := fakeotlp.New(t)
	x, err := Start(context.Background(), Config{
		Endpoint:           c.URL,
		Headers:            map[string]string{"Authorization": "Bearer " + collectorToken},
		ServiceVersion:     "v1.2.3",
		ResourceAttributes: map[string]string{"deployment.environment.name": "ci"},
	})
	if err != nil {
		t.Fatal(err)
	}
	x.Record(context.Background(), fixtureReport(), t0)
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := x.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if bad := c.Malformed(); len(bad) > 0 {
		t.Fatalf("the collector could not read %v", bad)
	}
	return c
}

// node is a span in the tree the test expects: its name, what identifies
// it (an item's path and skill other than code-review, an attempt's route
// and number), and its children.
type node struct {
	Name     string
	ID       string // warden.path, or warden.attempt for an attempt
	Children []node
}

func tree(spans []fakeotlp.Span) []node {
	byParent := map[string][]fakeotlp.Span{}
	for _, s := range spans {
		byParent[hex.EncodeToString(s.GetParentSpanId())] = append(byParent[hex.EncodeToString(s.GetParentSpanId())], s)
	}
	var build func(parent string) []node
	build = func(parent string) []node {
		var out []node // in the order received: Record ends spans in report order
		for _, s := range byParent[parent] {
			a := fakeotlp.Attrs(s.GetAttributes())
			id, _ := a["warden.path"].(string)
			if n, ok := a["warden.attempt"].(int64); ok {
				id = a["warden.route"].(string) + "#" + string(rune('0'+n))
			}
			if sk, ok := a["warden.skill"].(string); ok && sk != "code-review" {
				id += " " + sk
			}
			out = append(out, node{Name: s.GetName(), ID: id, Children: build(hex.EncodeToString(s.GetSpanId()))})
		}
		return out
	}
	return build("")
}

func TestRecordSpanTree(t *testing.T) {
	t.Parallel()
	c := exportFixture(t)
	spans := c.Spans()
	want := []node{{Name: "warden.review", Children: []node{
		{Name: "warden.item", ID: "auth/session.go", Children: []node{
			{Name: "chat big-model", ID: "primary#1"}, {Name: "chat big-model", ID: "primary#2"}}},
		{Name: "warden.item", ID: "db/query.go", Children: []node{
			{Name: "chat big-model", ID: "primary#1"}, {Name: "chat small-model", ID: "fallback#2"}}},
		{Name: "warden.item", ID: "pay/charge.go", Children: []node{
			{Name: "chat big-model", ID: "primary#1"}, {Name: "chat small-model", ID: "fallback#2"}}},
		{Name: "warden.item", ID: "api/handler.go", Children: []node{{Name: "chat big-model", ID: "primary#1"}}},
		{Name: "warden.item", ID: "api/handler.go security-review"}, // the batch's attempt is under its first item
		{Name: "warden.item", ID: "docs/README.md"},
	}}}
	if diff := cmp.Diff(want, tree(spans)); diff != "" {
		t.Errorf("span tree mismatch (-want +got):\n%s", diff)
	}

	trace := spans[0].GetTraceId()
	byName := map[string]fakeotlp.Span{}
	for _, s := range spans {
		if !bytes.Equal(s.GetTraceId(), trace) {
			t.Errorf("span %s is in trace %x, want one trace %x", s.GetName(), s.GetTraceId(), trace)
		}
		a := fakeotlp.Attrs(s.GetAttributes())
		key := s.GetName()
		if p, ok := a["warden.path"].(string); ok {
			key += " " + p + " " + a["warden.skill"].(string)
		}
		if _, ok := a["warden.attempt"]; !ok {
			byName[key] = s
		}
	}

	// Times are the report's, from the review's start.
	ms := func(n int64) uint64 { return uint64(t0.Add(time.Duration(n) * time.Millisecond).UnixNano()) }
	times := []struct {
		span       string
		start, end int64
		kind       tracepb.Span_SpanKind
	}{
		{"warden.review", 0, 10000, tracepb.Span_SPAN_KIND_INTERNAL},
		{"warden.item auth/session.go code-review", 10, 3010, tracepb.Span_SPAN_KIND_INTERNAL},
		{"warden.item docs/README.md code-review", 0, 0, tracepb.Span_SPAN_KIND_INTERNAL}, // never started
	}
	for _, tt := range times {
		s := byName[tt.span]
		if s.GetStartTimeUnixNano() != ms(tt.start) || s.GetEndTimeUnixNano() != ms(tt.end) || s.GetKind() != tt.kind {
			t.Errorf("%s: start %d end %d kind %v; want t0+%dms, t0+%dms, %v", tt.span,
				s.GetStartTimeUnixNano(), s.GetEndTimeUnixNano(), s.GetKind(), tt.start, tt.end, tt.kind)
		}
	}
	retry := spanAt(t, spans, "auth/session.go", 2)
	if retry.GetStartTimeUnixNano() != ms(1910) || retry.GetEndTimeUnixNano() != ms(3010) || retry.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("retry span: start %d end %d kind %v; want t0+1910ms, t0+3010ms, client", retry.GetStartTimeUnixNano(), retry.GetEndTimeUnixNano(), retry.GetKind())
	}

	// Statuses: the review is partial, the failed item and its attempts
	// are errors, the skipped item is not shown as fine either.
	statuses := map[string]tracepb.Status_StatusCode{
		"warden.review":                          tracepb.Status_STATUS_CODE_ERROR,
		"warden.item pay/charge.go code-review":  tracepb.Status_STATUS_CODE_ERROR,
		"warden.item docs/README.md code-review": tracepb.Status_STATUS_CODE_UNSET,
		"warden.item db/query.go code-review":    tracepb.Status_STATUS_CODE_UNSET,
	}
	for name, want := range statuses {
		if got := byName[name].GetStatus().GetCode(); got != want {
			t.Errorf("%s status = %v, want %v", name, got, want)
		}
	}
	if got := spanAt(t, spans, "pay/charge.go", 1).GetStatus(); got.GetCode() != tracepb.Status_STATUS_CODE_ERROR || got.GetMessage() != "rejected: circuit_open" {
		t.Errorf("rejected attempt status = %v, want error \"rejected: circuit_open\"", got)
	}

	// The batch's second item links to its first.
	first, second := byName["warden.item api/handler.go code-review"], byName["warden.item api/handler.go security-review"]
	if links := second.GetLinks(); len(links) != 1 || !bytes.Equal(links[0].GetSpanId(), first.GetSpanId()) {
		t.Errorf("second batch item links = %v, want one link to the first item's span %x", links, first.GetSpanId())
	}

	// The resource says what sent it.
	res := fakeotlp.Attrs(spans[0].Resource.GetAttributes())
	for k, v := range map[string]any{"service.name": "warden", "service.version": "v1.2.3", "deployment.environment.name": "ci", "telemetry.sdk.language": "go"} {
		if res[k] != v {
			t.Errorf("resource %s = %v, want %v", k, res[k], v)
		}
	}
}

// spanAt finds the span of attempt n of the item on path.
func spanAt(t *testing.T, spans []fakeotlp.Span, path string, n int64) fakeotlp.Span {
	t.Helper()
	items := map[string]string{}
	for _, s := range spans {
		if p, ok := fakeotlp.Attrs(s.GetAttributes())["warden.path"].(string); ok {
			items[hex.EncodeToString(s.GetSpanId())] = p
		}
	}
	for _, s := range spans {
		if fakeotlp.Attrs(s.GetAttributes())["warden.attempt"] == n && items[hex.EncodeToString(s.GetParentSpanId())] == path {
			return s
		}
	}
	t.Fatalf("no span for attempt %d of %s", n, path)
	return fakeotlp.Span{}
}

func TestRecordMetrics(t *testing.T) {
	t.Parallel()
	c := exportFixture(t)
	ms := c.Metrics()
	sums := []struct {
		name  string
		match map[string]any
		want  int64
	}{
		{"warden.reviews", map[string]any{"warden.outcome": "partial"}, 1},
		{"warden.retries", map[string]any{"warden.route": "primary", "warden.retry.reason": "overloaded"}, 1},
		{"warden.retries", nil, 1},
		{"warden.failovers", map[string]any{"warden.route": "fallback", "warden.failover.from": "primary", "warden.failover.reason": "timeout"}, 1},
		{"warden.failovers", map[string]any{"warden.failover.reason": "circuit_open"}, 1},
		{"warden.failovers", nil, 2},
		{"warden.timeouts", map[string]any{"warden.route": "primary"}, 1},
		{"warden.timeouts", nil, 1},
		{"warden.breaker.transitions", map[string]any{"warden.route": "primary", "warden.circuit.state": "open"}, 1},
		{"warden.breaker.transitions", map[string]any{"warden.route": "primary", "warden.circuit.state": "half_open"}, 1},
		{"warden.breaker.transitions", nil, 2},
	}
	for _, tt := range sums {
		got, ok := fakeotlp.Sum(ms, tt.name, tt.match)
		if !ok || got != tt.want {
			t.Errorf("%s%v = %d (received %v), want %d", tt.name, tt.match, got, ok, tt.want)
		}
	}
	hists := []struct {
		name  string
		match map[string]any
		want  uint64
	}{
		// Sent attempts, the batch's once; the rejected one has no duration.
		{"warden.attempt.duration", nil, 6},
		{"warden.attempt.duration", map[string]any{"warden.route": "primary"}, 4},
		{"warden.attempt.duration", map[string]any{"warden.route": "primary", "warden.attempt.class": "timeout"}, 1},
		{"warden.attempt.ttft", map[string]any{"warden.route": "primary"}, 1},
		{"gen_ai.client.token.usage", map[string]any{"gen_ai.token.type": "input"}, 3},
	}
	for _, tt := range hists {
		got, ok := fakeotlp.HistogramCount(ms, tt.name, tt.match)
		if !ok || got != tt.want {
			t.Errorf("%s%v count = %d (received %v), want %d", tt.name, tt.match, got, ok, tt.want)
		}
	}
	for _, m := range ms {
		if m.GetName() == "warden.attempt.duration" && m.GetUnit() != "ms" {
			t.Errorf("warden.attempt.duration unit = %q, want ms", m.GetUnit())
		}
	}
}

func TestCollectorTokenOnlyInHeaders(t *testing.T) {
	t.Parallel()
	c := exportFixture(t)
	raw := c.Raw()
	if len(raw) < 2 {
		t.Fatalf("got %d exports, want traces and metrics", len(raw))
	}
	for i, body := range raw {
		if bytes.Contains(body, []byte(collectorToken)) || bytes.Contains(body, []byte("SECRET")) {
			t.Errorf("export %d holds the collector's token", i)
		}
	}
	for i, h := range c.Headers() {
		if got := h.Get("Authorization"); got != "Bearer "+collectorToken {
			t.Errorf("export %d Authorization = %q, want the configured header", i, got)
		}
	}
}

func TestOffSendsNothing(t *testing.T) {
	t.Parallel()
	c := fakeotlp.New(t)
	for _, cfg := range []Config{{}, {Endpoint: c.URL, Disabled: true}} {
		x, err := Start(context.Background(), cfg)
		if err != nil {
			t.Fatalf("Start(%+v) = %v", cfg, err)
		}
		x.Record(context.Background(), fixtureReport(), t0)
		if err := x.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown of an exporter that is off = %v", err)
		}
	}
	var nilX *Exporter
	nilX.Record(context.Background(), fixtureReport(), t0)
	if err := nilX.Shutdown(context.Background()); err != nil {
		t.Errorf("(*Exporter)(nil).Shutdown = %v", err)
	}
	if n := len(c.Raw()); n != 0 {
		t.Errorf("the collector got %d exports, want none", n)
	}
}

func TestStartRejectsBadConfig(t *testing.T) {
	t.Parallel()
	_, err := Start(context.Background(), Config{Endpoint: "http://127.0.0.1:4318", Protocol: "http/json"})
	if _, ok := err.(*ConfigError); !ok {
		t.Errorf("Start(http/json) error = %v, want a *ConfigError", err)
	}
}

func TestShutdownReportsRefusedExport(t *testing.T) {
	t.Parallel()
	c := fakeotlp.New(t)
	c.Status = http.StatusBadRequest // not retried by the exporters
	x, err := Start(context.Background(), Config{Endpoint: c.URL, Headers: map[string]string{"api-key": collectorToken}})
	if err != nil {
		t.Fatal(err)
	}
	x.Record(context.Background(), fixtureReport(), t0)
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err = x.Shutdown(ctx)
	if err == nil {
		t.Fatal("Shutdown = nil, want the collector's refusal")
	}
	if msg := err.Error(); !strings.Contains(msg, "telemetry: traces: ") || !strings.Contains(msg, "telemetry: metrics: ") {
		t.Errorf("Shutdown error = %q, want both signals' failures", msg)
	}
	if bytes.Contains([]byte(err.Error()), []byte(collectorToken)) {
		t.Errorf("Shutdown error shows the collector token: %v", err)
	}
	if again := x.Shutdown(ctx); again == nil || again.Error() != err.Error() {
		t.Errorf("second Shutdown = %v, want the first one's result", again)
	}
}

// grpcCollector records OTLP over gRPC.
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu      sync.Mutex
	spans   int
	metrics int
}

func (g *grpcCollector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			g.spans += len(ss.GetSpans())
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	colmetricpb.UnimplementedMetricsServiceServer
	g *grpcCollector
}

func (m grpcMetrics) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	m.g.mu.Lock()
	defer m.g.mu.Unlock()
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			m.g.metrics += len(sm.GetMetrics())
		}
	}
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

func TestGRPC(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &grpcCollector{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, g)
	colmetricpb.RegisterMetricsServiceServer(srv, grpcMetrics{g: g})
	go srv.Serve(lis) // ends with srv.Stop below
	t.Cleanup(srv.Stop)

	x, err := Start(context.Background(), Config{Endpoint: "http://" + lis.Addr().String(), Protocol: ProtocolGRPC})
	if err != nil {
		t.Fatal(err)
	}
	x.Record(context.Background(), fixtureReport(), t0)
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := x.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.spans != 14 || g.metrics == 0 {
		t.Errorf("the gRPC collector got %d spans and %d metrics; want 14 spans and some metrics", g.spans, g.metrics)
	}
}
