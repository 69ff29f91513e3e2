package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrSymlink is what reading a symbolic link of a git tree returns: links
// are listed, never followed (a link's target is the blob's text, and
// following it could leave the tree).
var ErrSymlink = errors.New("symbolic link: not followed in a git tree")

// Tree is a read-only fs.FS of one git tree (a commit's files) read from
// the object database with git itself, never from the working tree: what
// the commit holds, whatever the checkout shows. Symbolic links are listed
// with fs.ModeSymlink and are not followed: Open and Stat describe the link
// itself (as Lstat does), reading one fails with ErrSymlink, and ReadLink
// returns its target. A submodule is an empty directory. Entries whose name
// fs.ValidPath would refuse, or that hold a backslash, are left out.
//
// The listing is read once by OpenTree; file contents are read on Open
// from one `git cat-file --batch` process that lives until Close or until
// the context given to OpenTree is done. It is safe for concurrent use.
type Tree struct {
	rev   string
	nodes map[string]*gitNode // by slash path; "." is the root
	b     *batch
}

// gitNode is one entry of the tree.
type gitNode struct {
	name     string
	mode     fs.FileMode
	oid      string
	size     int64
	children []*gitNode // of a directory, sorted by name
}

// OpenTree lists the tree of rev (a commit or tree-ish) in the
// repository at dir. The caller must Close it.
func OpenTree(ctx context.Context, dir, rev string) (*Tree, error) {
	if !validRev(rev) {
		return nil, fmt.Errorf("git tree: %q is not a revision", rev)
	}
	oid, err := Output(ctx, dir, "rev-parse", "--verify", "--quiet", rev+"^{tree}")
	if err != nil {
		return nil, fmt.Errorf("git tree of %s: not in the repository: %w", rev, err)
	}
	tree := strings.TrimSpace(string(oid))
	listing, err := Output(ctx, dir, "ls-tree", "-r", "-t", "-l", "-z", "--full-tree", tree)
	if err != nil {
		return nil, err
	}
	t := &Tree{rev: rev, nodes: map[string]*gitNode{".": {name: ".", mode: fs.ModeDir | 0o555}}}
	for _, rec := range bytes.Split(listing, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		if err := t.add(string(rec)); err != nil {
			return nil, fmt.Errorf("git ls-tree %s: %w", rev, err)
		}
	}
	for _, n := range t.nodes {
		slices.SortFunc(n.children, func(a, b *gitNode) int { return strings.Compare(a.name, b.name) })
	}

	if t.b, err = startBatch(ctx, dir); err != nil {
		return nil, err
	}
	return t, nil
}

// add records one ls-tree -l line: "<mode> <type> <oid> <size>\t<path>".
func (t *Tree) add(rec string) error {
	meta, p, ok := strings.Cut(rec, "\t")
	f := strings.Fields(meta)
	if !ok || len(f) != 4 {
		return fmt.Errorf("unexpected line %q", rec)
	}
	if !fs.ValidPath(p) || p == "." || strings.Contains(p, `\`) {
		return nil
	}
	n := &gitNode{name: path.Base(p), oid: f[2]}
	switch f[0] {
	case "040000":
		n.mode = fs.ModeDir | 0o555
	case "160000": // a submodule: its commit is not in this repository
		n.mode = fs.ModeDir | 0o555
	case "120000":
		n.mode = fs.ModeSymlink | 0o777
	case "100755":
		n.mode = 0o555
	default:
		n.mode = 0o444
	}
	if f[3] != "-" {
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return fmt.Errorf("size of %q: %w", p, err)
		}
		n.size = size
	}
	if old := t.nodes[p]; old != nil { // a directory made for a child first
		n.children = old.children
	}
	t.nodes[p] = n
	parent := t.dir(path.Dir(p))
	parent.children = slices.DeleteFunc(parent.children, func(c *gitNode) bool { return c.name == n.name })
	parent.children = append(parent.children, n)
	return nil
}

// dir returns the directory node p, making it (and its parents) when the
// listing has not shown it yet.
func (t *Tree) dir(p string) *gitNode {
	if n := t.nodes[p]; n != nil {
		return n
	}
	n := &gitNode{name: path.Base(p), mode: fs.ModeDir | 0o555}
	t.nodes[p] = n
	parent := t.dir(path.Dir(p))
	parent.children = append(parent.children, n)
	return n
}

// Close ends the cat-file process. Files already open stay readable.
func (t *Tree) Close() error { return t.b.close() }

func (t *Tree) lookup(op, name string) (*gitNode, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n := t.nodes[name]
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// Open opens name. A symbolic link is opened as itself (see Tree).
func (t *Tree) Open(name string) (fs.File, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	switch {
	case n.mode.IsDir():
		return &gitDir{node: n}, nil
	case n.mode&fs.ModeSymlink != 0:
		return &gitFile{node: n, err: &fs.PathError{Op: "read", Path: name, Err: ErrSymlink}}, nil
	}
	data, err := t.blob(n)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &gitFile{node: n, r: bytes.NewReader(data)}, nil
}

// blob reads n's contents from the cat-file process, by the id the
// listing gave.
func (t *Tree) blob(n *gitNode) ([]byte, error) {
	if n.size > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d MiB: not read from git", MaxFileBytes>>20)
	}
	typ, data, err := t.b.object(n.oid, MaxFileBytes)
	switch {
	case err != nil:
		return nil, err
	case typ != "blob" || int64(len(data)) != n.size:
		return nil, fmt.Errorf("git cat-file %s: a %s of %d bytes, the listing said a blob of %d", n.oid, typ, len(data), n.size)
	}
	return data, nil
}

// ReadFile implements fs.ReadFileFS.
func (t *Tree) ReadFile(name string) ([]byte, error) {
	f, err := t.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, isDir := f.(*gitDir); isDir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return io.ReadAll(f)
}

// Stat implements fs.StatFS. It does not follow a symbolic link.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return gitInfo{n}, nil
}

// Lstat implements fs.ReadLinkFS.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("lstat", name)
	if err != nil {
		return nil, err
	}
	return gitInfo{n}, nil
}

// ReadLink implements fs.ReadLinkFS: the link's target, as stored.
func (t *Tree) ReadLink(name string) (string, error) {
	n, err := t.lookup("readlink", name)
	if err != nil {
		return "", err
	}
	if n.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	target, err := t.blob(n)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return string(target), nil
}

// ReadDir implements fs.ReadDirFS.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return entries(n.children), nil
}

func entries(nodes []*gitNode) []fs.DirEntry {
	out := make([]fs.DirEntry, len(nodes))
	for i, c := range nodes {
		out[i] = fs.FileInfoToDirEntry(gitInfo{c})
	}
	return out
}

// gitInfo describes a node. ModTime is the zero time: a tree has none.
type gitInfo struct{ n *gitNode }

func (i gitInfo) Name() string       { return i.n.name }
func (i gitInfo) Size() int64        { return i.n.size }
func (i gitInfo) Mode() fs.FileMode  { return i.n.mode }
func (i gitInfo) ModTime() time.Time { return time.Time{} }
func (i gitInfo) IsDir() bool        { return i.n.mode.IsDir() }
func (i gitInfo) Sys() any           { return nil }

// gitFile is an open file (or symbolic link, whose reads fail with err).
type gitFile struct {
	node *gitNode
	r    *bytes.Reader
	err  error
}

func (f *gitFile) Stat() (fs.FileInfo, error) { return gitInfo{f.node}, nil }
func (f *gitFile) Close() error               { return nil }

func (f *gitFile) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	return f.r.Read(p)
}

func (f *gitFile) Seek(off int64, whence int) (int64, error) {
	if f.err != nil {
		return 0, f.err
	}
	return f.r.Seek(off, whence)
}

func (f *gitFile) ReadAt(p []byte, off int64) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	return f.r.ReadAt(p, off)
}

// gitDir is an open directory.
type gitDir struct {
	node *gitNode
	off  int
}

func (d *gitDir) Stat() (fs.FileInfo, error) { return gitInfo{d.node}, nil }
func (d *gitDir) Close() error               { return nil }
func (d *gitDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.node.name, Err: errors.New("is a directory")}
}

// ReadDir implements fs.ReadDirFile.
func (d *gitDir) ReadDir(count int) ([]fs.DirEntry, error) {
	rest := d.node.children[d.off:]
	if count > 0 {
		if len(rest) == 0 {
			return nil, io.EOF
		}
		rest = rest[:min(count, len(rest))]
	}
	d.off += len(rest)
	return entries(rest), nil
}
