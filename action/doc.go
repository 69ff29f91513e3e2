// Package action is the GitHub Action as a library: event → trusted
// configuration → review → publish. Run takes the Action's inputs as a
// struct, the event's bytes, and the services it needs (the GitHub client,
// the runner's workflow commands, the workspace, and from the wiring the
// reading of the configuration and the planning of a review); it returns a
// Result that cmd/warden maps to an exit code. The full, analyze and
// report modes are short compositions of the same steps, and both
// publishing modes publish through review.Publisher sinks (the check run
// and review of report/github, the job summary, the step outputs, the
// report file, telemetry).
//
// It owns the event handling, the trust rules (configuration and skills
// only from the base revision, fork and author rules), the report file of
// the split workflow and its validation. It must not import cmd/warden,
// execution/openai or telemetry, read the process environment, or exit.
package action
