// Package hunks turns git's unified diff format into reviewable chunks: it
// parses the diff, drops what should not be reviewed (with a reason for each
// path), applies the size limits, coalesces and splits hunks into chunks with
// context, and orders the chunks by priority.
//
// It is pure: io.Reader and values in, values out. It reads no environment,
// flags or files of its own (file contents come through Options.Source). It
// must not import any other warden package but secrets (which names the
// files that are secrets), go-openai or go-github.
//
// # Parsing
//
// Parse uses github.com/bluekeyes/go-gitdiff. A Line's Text is the line
// without its "\n" and, for a line that ended in "\r\n", without that one
// "\r": Line.CRLF records it, so a suggestion can restore the ending. Lines
// read through Options.Source are split the same way. Outside a fragment's
// lines (file headers, "---"/"+++", "@@" lines) a "\r\n" is read as "\n",
// so a diff saved by a CRLF tool never puts "\r" into a path. Input with no
// file header is an error wrapping ErrNotDiff; blank input is no files for
// Parse and an error wrapping ErrEmpty for ParseLimit, which also refuses
// input over a size cap (ErrTooLarge): before reading it when the reader
// knows its size, else as soon as the cap is passed while it streams.
//
// # Reasons
//
// Plan.Ignored gives each dropped path one of these stable reasons, checked
// in this order:
//
//	secret:<kind>      a file that holds secrets by its name (secrets.Withheld: dotenv, private-key,
//	                   keystore, credentials): never sent to a model, whatever the patterns say
//	ignored:<pattern>  the last Options.Ignore pattern matching the path, as written
//	deleted            a deleted file: nothing on the new side to review
//	binary             a binary file (with or without a "GIT binary patch")
//	submodule          a submodule (gitlink) change
//	renamed-unchanged  renamed without a content change
//	copied-unchanged   copied without a content change
//	mode-only          only the file mode changed
//	empty              no changed lines (e.g. an added empty file)
//	vendored           under vendor/, node_modules/, bower_components/, dist/ or build/ at any depth
//	lockfile           go.sum, package-lock.json, yarn.lock, pnpm-lock.yaml, Cargo.lock, poetry.lock, ...
//	minified           *.min.js, *.min.css, *.bundle.js, *.map, ...
//	generated          by name (*.pb.go, *_generated.go, *.gen.go, *_pb2.py, zz_generated.*, ...) or by a
//	                   marker in the first 10 lines: Go's "Code generated ... DO NOT EDIT." in any line-comment
//	                   syntax, or "@generated"; read from Options.Source, else from a hunk starting at line 1
//	limit:bytes        the file is larger than Options.MaxFileBytes
//	limit:files        more than Options.MaxFiles files remain
//	limit:lines        no share of Options.MaxChangedLines was left for the file
//	limit:lines:partial  only the file's first changed lines fit its share: the
//	                   rest are not reviewed (the path also has chunks)
//
// A "!" pattern in Options.Ignore that is the last to match a path re-includes
// it past vendored, lockfile, minified and generated, not past the reasons
// above them (there is nothing to review in those).
//
// Each entry's Lines counts the changed lines it leaves unreviewed (all of
// the file's, or for limit:lines:partial those past its share), so that a
// caller can say how much of the change in scope a limit dropped.
//
// vendored, lockfile, minified and generated are conventions the change's
// author controls: anyone can add a "Code generated ... DO NOT EDIT." line
// or name a file *_generated.go. With Options.Untrusted (an author the
// repository does not trust) they are not applied: such files are reviewed
// like the others and listed in Plan.Conventions with the reason they would
// have had. The Ignore globs are the repository's own and still apply.
//
// # Priority and limits
//
// A chunk's Priority is 1000 × (4 for source, 3 for tests, 2 for docs, 1 for
// config), plus 500 when one of the path's words is a risk word, plus its
// changed lines capped at 499. A path's words are its segments split at
// "/", ".", "-", "_", digits and camel-case humps, lower-cased, and match
// whole: auth (and authn, authz, oauth, authorize, ...), crypto, encrypt,
// security, session(s), sql, payment(s), migration(s), permission(s),
// secret(s), password(s), credential(s), login, logout, jwt, billing, csrf,
// saml, oidc, rbac, acl; "token(s)" only after access, refresh, bearer,
// api, auth, csrf, id, session, jwt or oauth (a lexer's tokens.js is not a
// credential). Chunk.Why says what the Priority is made of. Chunks are
// sorted by Priority, then path, then line.
//
// Limits rank files by the same score computed over the whole file (ties:
// by path, then the order of the diff). A file over MaxFileBytes is dropped
// whatever its rank; then, from the highest rank down, files are kept until
// MaxFiles is reached. When the kept files'
// changed lines exceed MaxChangedLines, the budget is spread over them: each
// file may take a share s, the largest with which all of them fit (small
// files whole, large ones cut to their first s changed lines, in file order,
// and listed as limit:lines:partial); but s is at least 40 lines (or a tenth
// of a smaller budget), and when that does not fit every file, the files of
// lowest rank get nothing (limit:lines). No file takes the whole budget.
//
// # Chunks
//
// Hunks fewer than CoalesceGap lines apart (counted between the last new-side
// line of one and the first of the next) coalesce while the chunk's text
// stays within MaxChunkChars; when Source is available, the lines between
// them are filled in as context lines. A hunk larger than MaxChunkChars is
// split at line boundaries. StartLine and EndLine span the chunk's new-side
// lines (context and added); a chunk of deletions only sits at the new-side
// line after which they were deleted (at least 1). Before and After hold up
// to ContextLines lines around the chunk, read from Source, or else from
// the diff's own lines next to the chunk (a neighbouring chunk of the same
// file). Chunk.Lines may share memory with the parsed File; treat both as
// read-only.
//
// # Context
//
// In Go, C, C++, C#, Java, JavaScript, TypeScript, Rust, Kotlin, Scala,
// Swift, PHP, Dart, Objective-C, Groovy, Zig and Python, Before and After
// are then trimmed to the block around the chunk, read from indentation
// alone (a tab counts 4 columns), unless Options.FullContext is set. It
// only ever removes lines; where the rule finds nothing it keeps them all.
// Before is read from the chunk's lines up to its first line at column 0,
// After from those after its last one (both from all its lines when it has
// none); let m be their least indentation.
//
//   - m > 0 for Before: the header is the nearest non-blank line before the
//     chunk indented less than m, when it opens a block (it ends in "{",
//     "(", "[" or ":", before an optional line comment). A header that
//     continues a construct ("} else {", "elif x:", ") error {" closing a
//     long signature) is followed back to the line at its indentation that
//     starts it; a lone "{" takes the line above it. Before starts at the
//     header.
//   - m > 0 for After: After ends at the first non-blank line indented no
//     more than the header (when the whole chunk is inside it), else no
//     more than m−1, including that line when it starts with a closing
//     bracket.
//   - m = 0: Before starts after the nearest line that starts with a
//     closing bracket at column 0 or is indented (the end of the previous
//     declaration); After ends after the first column-0 closing line or
//     before the first column-0 line that opens a block (the next
//     declaration).
//
// Blank lines at the outer ends of Before and After are dropped.
package hunks
