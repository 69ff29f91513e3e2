package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// The OpenTelemetry SDK and its OTLP exporters read some standard variables
// themselves, from the process environment. On a value they cannot use they
// print a raw log line of their own, or fall back to a default without a
// word (OTEL_EXPORTER_OTLP_COMPRESSION=zstd: no compression;
// OTEL_EXPORTER_OTLP_INSECURE=yes: false). checkSDKVars reads each of them
// first, through the caller's getenv, and refuses a bad value with an error
// naming the variable, before anything is built.

// signals are the prefixes under which an OTLP variable exists: for every
// signal, and for traces or metrics only (which wins over the first).
var signals = []string{"OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_", "OTEL_EXPORTER_OTLP_METRICS_"}

// sdkVar is one variable the SDK reads and the check warden makes of it:
// problem returns "" for a good value.
type sdkVar struct {
	name    string
	problem func(v string) string
}

// sdkVars are the variables the SDK and exporters read (OpenTelemetry-Go
// v1.47: sdk/trace/internal/env, exporters/otlp/*/internal/envconfig),
// except the endpoints and the protocol, which Config reads itself.
func sdkVars() []sdkVar {
	var vars []sdkVar
	for _, p := range signals {
		vars = append(vars,
			sdkVar{p + "TIMEOUT", milliseconds},
			sdkVar{p + "COMPRESSION", oneOf("gzip", "none")},
			sdkVar{p + "INSECURE", oneOf("true", "false")},
		)
		if p != signals[0] { // OTEL_EXPORTER_OTLP_HEADERS is Config's (FromEnv)
			vars = append(vars, sdkVar{p + "HEADERS", func(v string) string {
				if _, err := ParseKeyValues(v); err != nil {
					return err.Error()
				}
				return ""
			}})
		}
	}
	vars = append(vars,
		sdkVar{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", oneOf("cumulative", "delta", "lowmemory")},
		sdkVar{"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION", oneOf("explicit_bucket_histogram", "base2_exponential_bucket_histogram")},
		sdkVar{"OTEL_BSP_SCHEDULE_DELAY", milliseconds},
		sdkVar{"OTEL_BSP_EXPORT_TIMEOUT", milliseconds},
		sdkVar{"OTEL_BSP_MAX_QUEUE_SIZE", positive},
		sdkVar{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", positive},
	)
	for _, n := range []string{
		"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT", "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
		"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_SPAN_EVENT_COUNT_LIMIT", "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT",
		"OTEL_SPAN_LINK_COUNT_LIMIT", "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT",
	} {
		vars = append(vars, sdkVar{n, limit})
	}
	return vars
}

func milliseconds(v string) string {
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		return fmt.Sprintf("%q is not a whole number of milliseconds", v)
	}
	return ""
}

func positive(v string) string {
	if n, err := strconv.Atoi(v); err != nil || n <= 0 {
		return fmt.Sprintf("%q is not a whole number above 0", v)
	}
	return ""
}

// limit is a span limit: a whole number, negative for no limit.
func limit(v string) string {
	if _, err := strconv.Atoi(v); err != nil {
		return fmt.Sprintf("%q is not a whole number (negative: no limit)", v)
	}
	return ""
}

// oneOf accepts the values given, in any case.
func oneOf(values ...string) func(string) string {
	return func(v string) string {
		if slices.Contains(values, strings.ToLower(v)) {
			return ""
		}
		return fmt.Sprintf("%q is not %s", v, orList(values))
	}
}

// orList is "a, b or c".
func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// checkSDKVars checks every variable of sdkVars, the per-signal protocols
// (warden speaks one protocol, protocol, for both signals) and the TLS
// files (read through readFile, as the exporters would read them). It
// returns every problem, each a *ConfigError.
func checkSDKVars(getenv func(string) string, readFile func(string) ([]byte, error), protocol string) error {
	var errs []error
	for _, v := range sdkVars() {
		if val := strings.TrimSpace(getenv(v.name)); val != "" {
			if p := v.problem(val); p != "" {
				errs = append(errs, &ConfigError{v.name, p})
			}
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if v := strings.TrimSpace(getenv(name)); v != "" && v != protocol && !(v == ProtocolHTTPProtobuf && protocol == "") {
			errs = append(errs, &ConfigError{name, fmt.Sprintf("%q differs from OTEL_EXPORTER_OTLP_PROTOCOL (%s): warden sends both signals with one protocol; set OTEL_EXPORTER_OTLP_PROTOCOL only",
				v, orDefault(protocol))})
		}
	}
	for _, p := range signals {
		errs = append(errs, checkTLS(getenv, readFile, p)...)
	}
	return errors.Join(errs...)
}

func orDefault(protocol string) string {
	if protocol == "" {
		return ProtocolHTTPProtobuf
	}
	return protocol
}

// checkTLS checks the certificate authority and the client certificate and
// key under prefix: files that can be read and hold what they should, the
// certificate and key given together and matching.
func checkTLS(getenv func(string) string, readFile func(string) ([]byte, error), prefix string) []error {
	read := func(name string) ([]byte, error) {
		path := strings.TrimSpace(getenv(name))
		if path == "" {
			return nil, nil
		}
		if readFile == nil {
			return nil, &ConfigError{name, "cannot be read here"}
		}
		b, err := readFile(path)
		if err != nil {
			return nil, &ConfigError{name, fmt.Sprintf("cannot read %s: %v", path, unwrapPath(err))}
		}
		return b, nil
	}
	var errs []error
	ca := prefix + "CERTIFICATE"
	if b, err := read(ca); err != nil {
		errs = append(errs, err)
	} else if b != nil && !x509.NewCertPool().AppendCertsFromPEM(b) {
		errs = append(errs, &ConfigError{ca, fmt.Sprintf("%s holds no PEM certificate", strings.TrimSpace(getenv(ca)))})
	}
	certName, keyName := prefix+"CLIENT_CERTIFICATE", prefix+"CLIENT_KEY"
	cert, cerr := read(certName)
	key, kerr := read(keyName)
	switch {
	case cerr != nil || kerr != nil:
		errs = append(errs, errors.Join(cerr, kerr))
	case (cert == nil) != (key == nil):
		given, missing := certName, keyName
		if cert == nil {
			given, missing = keyName, certName
		}
		errs = append(errs, &ConfigError{given, "is set without " + missing + ": set both, or neither"})
	case cert != nil:
		if _, err := tls.X509KeyPair(cert, key); err != nil {
			errs = append(errs, &ConfigError{certName, fmt.Sprintf("and %s are not a certificate and its key: %v", keyName, err)})
		}
	}
	return errs
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
