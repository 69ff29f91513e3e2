package report

import (
	"bytes"
	"encoding/json"

	"github.com/org/warden/review"
)

// writeJSON writes the contract object of DESIGN.md §5: one object, indented
// by two spaces, with a trailing newline. List fields are [] rather than null;
// they are normalised on a copy.
func writeJSON(buf *bytes.Buffer, r *review.Report) error {
	c := normalized(r)
	enc := json.NewEncoder(buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(c) // Encode adds the trailing newline
}

// normalized returns a shallow copy of r whose list fields, and each item's
// attempts, are non-nil, and whose schema is set. r is not modified: items
// are copied into a new slice before their attempts are replaced.
func normalized(r *review.Report) *review.Report {
	c := *r
	if c.Schema == "" {
		c.Schema = review.Schema
	}
	c.Findings = nonNil(c.Findings)
	c.Ignored = nonNil(c.Ignored)
	c.Routes = nonNil(c.Routes)
	c.Diagnoses = nonNil(c.Diagnoses)
	c.Policy.Routes = nonNil(c.Policy.Routes)
	c.Coverage.NotReviewed = nonNil(c.Coverage.NotReviewed)
	c.Coverage.Excluded = nonNil(c.Coverage.Excluded)
	items := make([]review.Item, len(r.Items))
	for i, it := range r.Items {
		it.Attempts = nonNil(it.Attempts)
		items[i] = it
	}
	c.Items = items
	return &c
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
