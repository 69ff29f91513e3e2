package main

import "github.com/org/warden/review"

// checkVerify checks [review] verify and verify_route (the route itself is
// checked against the routes when the review is planned).
func (c *fileConfig) checkVerify(bad badKey) error {
	if _, err := review.ParseVerifyMode(c.Review.Verify); err != nil {
		return bad(0, "review.verify", "%q: want off, auto or required", c.Review.Verify)
	}
	if c.Review.VerifyRoute != "" && c.verifyMode() == review.VerifyOff {
		return bad(0, "review.verify_route", "set, but review.verify is off: set verify = \"auto\" or \"required\"")
	}
	return nil
}

// verifyMode is [review] verify, checked by checkVerify.
func (c *fileConfig) verifyMode() review.VerifyMode {
	m, _ := review.ParseVerifyMode(c.Review.Verify)
	return m
}
