package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/org/warden/review"
)

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases() {
		var buf bytes.Buffer
		if err := Write(&buf, tc.report, FormatJSON, tc.opts); err != nil {
			t.Fatalf("Write(%s, json) = %v", tc.name, err)
		}
		if !strings.HasSuffix(buf.String(), "}\n") || strings.Count(buf.String(), "\n}\n") != 1 {
			t.Errorf("Write(%s, json) is not one object with a trailing newline:\n%s", tc.name, buf.String())
		}
		var got review.Report
		dec := json.NewDecoder(&buf)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("decoding Write(%s, json): %v", tc.name, err)
		}
		want := *tc.report
		want.Schema = review.Schema
		if diff := cmp.Diff(&want, &got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Write(%s, json) does not decode to the report (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestJSONEmptyLists checks the contract's lists are [] and never null, for
// the report and for each item's attempts.
func TestJSONEmptyLists(t *testing.T) {
	t.Parallel()
	r := &review.Report{
		Outcome: review.OutcomePartial,
		Items:   []review.Item{{Skill: "style", Path: "a.go", Status: review.StatusSkipped, Reason: "budget"}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Findings, Items, Ignored, Routes, Diagnoses json.RawMessage
		Policy                                      struct{ Routes json.RawMessage }
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]json.RawMessage{"findings": got.Findings, "ignored": got.Ignored, "routes": got.Routes,
		"diagnoses": got.Diagnoses, "policy.routes": got.Policy.Routes} {
		if string(raw) != "[]" {
			t.Errorf("Write(json) %s = %s, want []", name, raw)
		}
	}
	var items []struct{ Attempts json.RawMessage }
	if err := json.Unmarshal(got.Items, &items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || string(items[0].Attempts) != "[]" {
		t.Errorf("Write(json) items = %s, want one item with attempts []", got.Items)
	}
	if r.Findings != nil || r.Items[0].Attempts != nil {
		t.Errorf("Write(json) replaced nil slices in its input")
	}
}

// TestJSONKeys pins the top-level keys of the contract (DESIGN.md §5).
func TestJSONKeys(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Write(&buf, goldenCases()[0].report, FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	// diagnoses and coverage are additive to the contract of DESIGN.md §5.
	want := []string{"coverage", "diagnoses", "duration_ms", "findings", "ignored", "items", "outcome", "policy", "routes", "schema", "summary", "usage"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Write(json) top-level keys (-want +got):\n%s", diff)
	}
}
