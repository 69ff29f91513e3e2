// Package fakeotlp is a recording OTLP/HTTP collector for tests: an
// httptest server that accepts POST /v1/traces and /v1/metrics in
// protobuf (gzip or not), decodes them with the OTLP protocol's own Go
// types, and keeps every request, raw and decoded, for a test to inspect.
//
// It may import go.opentelemetry.io/proto/otlp and google.golang.org/protobuf;
// nothing of warden.
package fakeotlp
