package telemetry

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"
)

// TestFromEnvRejectsWhatTheSDKWouldNot: with telemetry on, a value of a
// variable the SDK or its exporters read themselves that they could not
// use is an error naming the variable (never a raw SDK log line, never a
// silent default); several are one error naming each. A good value passes.
func TestFromEnvRejectsWhatTheSDKWouldNot(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, value, want string }{
		{"OTEL_SDK_DISABLED", "yes", `OTEL_SDK_DISABLED: "yes" is not true or false`},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "abc", `OTEL_EXPORTER_OTLP_TIMEOUT: "abc" is not a whole number of milliseconds`},
		{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "-5", `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "-5" is not a whole number of milliseconds`},
		{"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "10s", `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: "10s" is not a whole number of milliseconds`},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", `OTEL_EXPORTER_OTLP_COMPRESSION: "zstd" is not gzip or none`},
		{"OTEL_EXPORTER_OTLP_INSECURE", "maybe", `OTEL_EXPORTER_OTLP_INSECURE: "maybe" is not true or false`},
		{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "token", `OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 1 is not key=value`},
		{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "sometimes", `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "sometimes" is not cumulative, delta or lowmemory`},
		{"OTEL_BSP_SCHEDULE_DELAY", "abc", `OTEL_BSP_SCHEDULE_DELAY: "abc" is not a whole number of milliseconds`},
		{"OTEL_BSP_MAX_QUEUE_SIZE", "0", `OTEL_BSP_MAX_QUEUE_SIZE: "0" is not a whole number above 0`},
		{"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "many", `OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: "many" is not a whole number (negative: no limit)`},
		{"OTEL_TRACES_SAMPLER", "bogus", `OTEL_TRACES_SAMPLER: "bogus" is not always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio`},
		{"OTEL_TRACES_EXPORTER", "console", `OTEL_TRACES_EXPORTER: "console" is not supported: warden exports otlp, or none`},
		{"OTEL_METRICS_EXPORTER", "prometheus", `OTEL_METRICS_EXPORTER: "prometheus" is not supported: warden exports otlp, or none`},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" differs from OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf): warden sends both signals with one protocol; set OTEL_EXPORTER_OTLP_PROTOCOL only`},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/ca/missing.pem", `OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read /ca/missing.pem: file does not exist`},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/ca/junk.pem", `OTEL_EXPORTER_OTLP_CERTIFICATE: /ca/junk.pem holds no PEM certificate`},
		{"OTEL_EXPORTER_OTLP_CLIENT_KEY", "/ca/key.pem", `OTEL_EXPORTER_OTLP_CLIENT_KEY: is set without OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: set both, or neither`},
	}
	files := testTLSFiles(t)
	for _, c := range cases {
		vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", c.name: c.value}
		_, err := FromEnv(func(k string) string { return vars[k] }, files.read, "1", nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("FromEnv(%s=%q) = %v, want %q", c.name, c.value, err, c.want)
		}
		var ce *ConfigError
		if err != nil && !errors.As(err, &ce) {
			t.Errorf("FromEnv(%s=%q) = %T, want a *ConfigError inside", c.name, c.value, err)
		}
		// Off, nothing the SDK reads matters: only warden's own variables do.
		delete(vars, "OTEL_EXPORTER_OTLP_ENDPOINT")
		if _, err := FromEnv(func(k string) string { return vars[k] }, files.read, "1", nil); (err != nil) != (c.name == "OTEL_SDK_DISABLED") {
			t.Errorf("FromEnv(%s=%q) with telemetry off = %v", c.name, c.value, err)
		}
	}

	good := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otlp.example.com", "OTEL_EXPORTER_OTLP_TIMEOUT": "10000", "OTEL_EXPORTER_OTLP_COMPRESSION": "GZIP",
		"OTEL_EXPORTER_OTLP_INSECURE": "false", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca/ca.pem", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "/ca/cert.pem",
		"OTEL_EXPORTER_OTLP_CLIENT_KEY": "/ca/key.pem", "OTEL_BSP_MAX_QUEUE_SIZE": "4096", "OTEL_SPAN_EVENT_COUNT_LIMIT": "-1",
		"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25", "OTEL_METRICS_EXPORTER": "none",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_SDK_DISABLED": "False",
	}
	cfg, err := FromEnv(func(k string) string { return good[k] }, files.read, "1", nil)
	if err != nil {
		t.Fatalf("FromEnv(good) = %v", err)
	}
	if cfg.Sampler != "parentbased_traceidratio" || cfg.SamplerRatio != 0.25 || !cfg.NoMetrics || cfg.NoTraces || cfg.Disabled {
		t.Errorf("FromEnv(good) = %+v", cfg)
	}
	if traces, metrics, err := cfg.endpoints(); err != nil || traces != "https://otlp.example.com/v1/traces" || metrics != "" {
		t.Errorf("endpoints = %q, %q, %v; want traces only (OTEL_METRICS_EXPORTER=none)", traces, metrics, err)
	}

	bad := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "abc", "OTEL_TRACES_SAMPLER_ARG": "2", "OTEL_TRACES_SAMPLER": "traceidratio"}
	_, err = FromEnv(func(k string) string { return bad[k] }, files.read, "1", nil)
	want := `OTEL_TRACES_SAMPLER_ARG: "2" is not a ratio from 0 to 1; OTEL_EXPORTER_OTLP_TIMEOUT: "abc" is not a whole number of milliseconds`
	if err == nil || err.Error() != want || strings.Contains(err.Error(), "\n") {
		t.Errorf("FromEnv(two bad) = %v, want one line %q", err, want)
	}
}

// TestSDKLogsThroughWardensLogger: once telemetry starts, the SDK's own
// log lines go to the logger warden gave it (the -v log), not to standard
// error by the SDK's default logger. Not parallel: the SDK's logger is
// the process's.
func TestSDKLogsThroughWardensLogger(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.Level(-8)}))
	x, err := Start(context.Background(), Config{Endpoint: "http://127.0.0.1:1", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	_ = x.Shutdown(context.Background())
	if !strings.Contains(buf.String(), "TracerProvider created") {
		t.Errorf("the SDK's log did not reach warden's logger:\n%s", buf.String())
	}
}

// tlsFiles is an in-memory file system of a CA certificate, a client
// certificate and its key, and a file that holds none.
type tlsFiles map[string][]byte

func (f tlsFiles) read(path string) ([]byte, error) {
	if b, ok := f[path]; ok {
		return b, nil
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
}

func testTLSFiles(t *testing.T) tlsFiles {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "warden test"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tlsFiles{
		"/ca/ca.pem": cert, "/ca/cert.pem": cert,
		"/ca/key.pem":  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
		"/ca/junk.pem": []byte("not a certificate\n"),
	}
}
