package report

import (
	"bytes"
	"encoding"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

var (
	_ flag.Value               = new(Format)
	_ encoding.TextUnmarshaler = new(Format)
	_ encoding.TextMarshaler   = Format(0)
)

func TestParseFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Format
		wantErr bool
	}{
		{in: "text", want: FormatText},
		{in: "json", want: FormatJSON},
		{in: "markdown", want: FormatMarkdown},
		{in: "sarif", want: FormatSARIF},
		{in: " SARIF ", want: FormatSARIF},
		{in: "Markdown", want: FormatMarkdown},
		{in: "md", wantErr: true},
		{in: "", wantErr: true},
		{in: "xml", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseFormat(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ParseFormat(%q) = %v, nil, want an error", tt.in, got)
				continue
			}
			for _, name := range []string{"text", "json", "markdown", "sarif"} {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("ParseFormat(%q) error = %q, want it to list %q", tt.in, err, name)
				}
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseFormat(%q) = %v, %v, want %v, nil", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatStringRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range allFormats {
		got, err := ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v, want %v, nil", f.String(), got, err, f)
		}
		b, err := f.MarshalText()
		if err != nil || string(b) != f.String() {
			t.Errorf("%v.MarshalText() = %q, %v, want %q, nil", f, b, err, f.String())
		}
	}
	if got, want := Format(9).String(), "format(9)"; got != want {
		t.Errorf("Format(9).String() = %q, want %q", got, want)
	}
	if _, err := Format(9).MarshalText(); err == nil {
		t.Errorf("Format(9).MarshalText() error = nil, want an error")
	}
}

func TestFormatFlag(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("review", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	var f Format
	fs.Var(&f, "format", "output format")
	if err := fs.Parse([]string{"--format", "sarif"}); err != nil || f != FormatSARIF {
		t.Errorf("Parse(--format sarif) = %v, format %v, want nil, sarif", err, f)
	}
	if err := fs.Parse([]string{"--format", "yaml"}); err == nil {
		t.Errorf("Parse(--format yaml) = nil, want an error")
	}
	if f != FormatSARIF {
		t.Errorf("after a bad --format the value = %v, want it unchanged (sarif)", f)
	}
}

type failWriter struct{}

var errDiskFull = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	r := &review.Report{Outcome: review.OutcomeComplete}
	var buf bytes.Buffer
	if err := Write(&buf, nil, FormatText, Options{}); err == nil {
		t.Errorf("Write(nil report) = nil, want an error")
	}
	if err := Write(&buf, r, Format(42), Options{}); err == nil {
		t.Errorf("Write(format 42) = nil, want an error")
	}
	if buf.Len() != 0 {
		t.Errorf("failed Writes wrote %q, want nothing", buf.String())
	}
	for _, f := range allFormats {
		if err := Write(failWriter{}, r, f, Options{}); !errors.Is(err, errDiskFull) {
			t.Errorf("Write(failing writer, %v) = %v, want it to wrap %v", f, err, errDiskFull)
		}
	}
}
