package fakeotlp

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector is a recording OTLP/HTTP receiver. Its methods are safe for
// concurrent use.
type Collector struct {
	*httptest.Server

	// Status, when set before the first request, is the HTTP status every
	// export is answered with instead of 200.
	Status int

	mu        sync.Mutex
	raw       [][]byte
	headers   []http.Header
	traces    []*coltracepb.ExportTraceServiceRequest
	metrics   []*colmetricpb.ExportMetricsServiceRequest
	malformed []string
}

// New starts a Collector on loopback, closed when the test ends.
func New(t testing.TB) *Collector {
	t.Helper()
	c := &Collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	var msg, resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		msg, resp = &coltracepb.ExportTraceServiceRequest{}, &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		msg, resp = &colmetricpb.ExportMetricsServiceRequest{}, &colmetricpb.ExportMetricsServiceResponse{}
	default:
		c.fail(r.URL.Path + ": unknown path")
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.fail(r.URL.Path + ": not a POST of application/x-protobuf")
		http.Error(w, "want POST application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			c.fail(r.URL.Path + ": bad gzip")
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(data, msg)
	}
	if err != nil {
		c.fail(r.URL.Path + ": " + err.Error())
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.raw = append(c.raw, data)
	c.headers = append(c.headers, r.Header.Clone())
	switch m := msg.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		c.traces = append(c.traces, m)
	case *colmetricpb.ExportMetricsServiceRequest:
		c.metrics = append(c.metrics, m)
	}
	status := c.Status
	c.mu.Unlock()
	if status != 0 {
		http.Error(w, "scripted failure", status)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (c *Collector) fail(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.malformed = append(c.malformed, what)
}

// Malformed lists the requests the collector could not accept as OTLP.
func (c *Collector) Malformed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.malformed...)
}

// Raw returns the (decompressed) body of every accepted export.
func (c *Collector) Raw() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.raw...)
}

// Headers returns the HTTP headers of every accepted export.
func (c *Collector) Headers() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]http.Header(nil), c.headers...)
}

// Span is one received span with the resource it came with.
type Span struct {
	*tracepb.Span
	Resource *resourcepb.Resource
	Scope    *commonpb.InstrumentationScope
}

// Spans returns every span received, in the order received.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Span
	for _, req := range c.traces {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					out = append(out, Span{Span: s, Resource: rs.GetResource(), Scope: ss.GetScope()})
				}
			}
		}
	}
	return out
}

// Metric is one received metric with the resource it came with.
type Metric struct {
	*metricpb.Metric
	Resource *resourcepb.Resource
}

// Metrics returns every metric received, in the order received.
func (c *Collector) Metrics() []Metric {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Metric
	for _, req := range c.metrics {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					out = append(out, Metric{Metric: m, Resource: rm.GetResource()})
				}
			}
		}
	}
	return out
}

// Attrs flattens OTLP attributes into a map of their Go values (string,
// int64, float64, bool, or the value's string form for anything else).
func Attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = x.IntValue
		case *commonpb.AnyValue_DoubleValue:
			out[kv.GetKey()] = x.DoubleValue
		case *commonpb.AnyValue_BoolValue:
			out[kv.GetKey()] = x.BoolValue
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}

// Sum adds up the data points of a counter (a sum metric) whose attributes
// include every one of match; ok is false when the metric was not received.
func Sum(ms []Metric, name string, match map[string]any) (total int64, ok bool) {
	for _, m := range ms {
		if m.GetName() != name || m.GetSum() == nil {
			continue
		}
		ok = true
		for _, dp := range m.GetSum().GetDataPoints() {
			if matches(Attrs(dp.GetAttributes()), match) {
				total += dp.GetAsInt()
			}
		}
	}
	return total, ok
}

// HistogramCount counts the values recorded in a histogram whose data
// points' attributes include every one of match; ok is false when the
// metric was not received.
func HistogramCount(ms []Metric, name string, match map[string]any) (count uint64, ok bool) {
	for _, m := range ms {
		if m.GetName() != name || m.GetHistogram() == nil {
			continue
		}
		ok = true
		for _, dp := range m.GetHistogram().GetDataPoints() {
			if matches(Attrs(dp.GetAttributes()), match) {
				count += dp.GetCount()
			}
		}
	}
	return count, ok
}

func matches(attrs, match map[string]any) bool {
	for k, v := range match {
		if attrs[k] != v {
			return false
		}
	}
	return true
}
