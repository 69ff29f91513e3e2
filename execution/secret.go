package execution

import "log/slog"

// Secret holds an API key or token. It prints, formats and logs as REDACTED;
// only Reveal gives the value, for the one place that sends it.
type Secret string

// Redacted is what a Secret shows instead of its value.
const Redacted = "REDACTED"

// String implements fmt.Stringer.
func (Secret) String() string { return Redacted }

// GoString implements fmt.GoStringer, so %#v does not leak the value either.
func (Secret) GoString() string { return Redacted }

// LogValue implements slog.LogValuer.
func (Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalText implements encoding.TextMarshaler, so JSON and TOML encoders
// write REDACTED too.
func (Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// KeyEnvs are the environment variables that carry a model key without a
// configuration naming one, in the order the first set one is chosen.
var KeyEnvs = []string{"WARDEN_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"}

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }
