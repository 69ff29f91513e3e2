// Package related finds the code a human reviewer would open next to a
// chunk of a change, under a budget in characters: the whole file when it
// is small; otherwise the declaration that encloses the chunk, then the
// declarations (in the same repository) of the identifiers its changed
// lines use.
//
// Go is read with go/parser: the enclosing declaration is the top-level
// declaration around the chunk, and identifiers resolve to the top-level
// declarations of the file's package directory and, for a selector pkg.Name
// whose import path lies inside the repository's module (go.mod at the
// root), of that package's directory. No type checking: a method is found
// by its name, which may bring a same-named method of another type (the
// budget bounds the cost of such a guess).
//
// Other languages use a bounded lexical index: definition lines ("def
// NAME", "class NAME", "function NAME", "const NAME =", "fn NAME", ...) in
// the files of the same directory with the same extension, at most
// MaxIndexFiles files of at most MaxIndexBytes each, a definition's block
// ending at its dedent (Python) or its closing brace, at most
// MaxBlockLines lines. Why lexical: a parser per language is a dependency
// per language, and callee definitions in the same directory are most of
// what a reviewer opens; a wrong match costs only budget, never a finding.
//
// related imports hunks only; it must not import review, execution or
// anything above them.
package related
