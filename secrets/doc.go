// Package secrets is warden's one home for secrets: which files are secrets
// by their name (never sent to a model), which text is a secret by its
// content (gitleaks' maintained rule set, plus the values of the keys and
// tokens warden itself holds), and how a secret is replaced by a
// placeholder wherever warden writes or sends text: a prompt, a log line, a
// report, an error.
//
// A Match says which rule found a secret and where, never its value: the
// value stays inside the text it was found in. Held values are matched
// exactly; the rule set runs content-only, with none of its path
// allowlists (a file's name is chosen by the change's author, who must not
// choose what is scanned) and with its inline "gitleaks:allow" comments
// ignored (nor what counts as a secret).
//
// It sits at the bottom of the house: it reads no environment, flags or
// files, and it must not import any other warden package. Only it imports
// github.com/zricethezav/gitleaks/v8.
package secrets
