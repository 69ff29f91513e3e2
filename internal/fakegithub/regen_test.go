package fakegithub

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var regen = flag.Bool("regen", false, "fetch the npm packages with `npm pack` and rewrite spec/ and testdata/webhooks/ from them")

// The npm packages the committed data comes from. Both are MIT-licensed;
// spec/NOTICE and testdata/webhooks/NOTICE carry the notice.
const (
	openapiPackage  = "@octokit/openapi@23.0.2"
	openapiFile     = "package/generated/api.github.com.json"
	webhooksPackage = "@octokit/webhooks-examples@7.6.1"
	webhooksFile    = "package/api.github.com/index.json"
)

// operations are the operationIds the trimmed spec keeps: every route the
// fake serves (see Routes and TestSpecCoversRoutes).
var operations = []string{
	"checks/create", "checks/update", "checks/get", "checks/list-for-ref",
	"pulls/get", "pulls/list-files", "pulls/list-review-comments", "pulls/list-reviews", "pulls/create-review",
	"pulls/create-reply-for-review-comment", "issues/create-comment", "issues/list-comments",
	"reactions/create-for-issue-comment", "reactions/list-for-issue-comment",
	"reactions/create-for-pull-request-review-comment", "reactions/list-for-pull-request-review-comment",
	"repos/get-collaborator-permission-level", "users/get-authenticated",
	// the bot's state and follow-ups (issue 21): workflow artifacts and the
	// runs that made them, one review comment, the findings ledger comment
	"actions/list-artifacts-for-repo", "actions/list-workflow-run-artifacts", "actions/get-workflow-run",
	"actions/download-artifact", "pulls/get-review-comment", "issues/get-comment", "issues/update-comment",
}

// TestRegenerate rewrites spec/api.github.com.json, spec/schema.graphql
// and testdata/webhooks/<event>/ from the npm tarballs:
//
//	go test ./internal/fakegithub -run TestRegenerate -regen
//
// It needs npm and the npm registry; without -regen it is skipped.
func TestRegenerate(t *testing.T) {
	if !*regen {
		t.Skip("run with -regen to rewrite spec/ and testdata/webhooks/ from the npm packages")
	}
	dir := t.TempDir()
	out, err := exec.Command("npm", "pack", "--silent", "--pack-destination", dir, openapiPackage, webhooksPackage, graphqlPackage).CombinedOutput()
	if err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	tarball := func(pkg string) string {
		name, version, _ := strings.Cut(strings.TrimPrefix(pkg, "@"), "@")
		return filepath.Join(dir, strings.ReplaceAll(name, "/", "-")+"-"+version+".tgz")
	}

	full, err := readFromTarball(tarball(openapiPackage), openapiFile)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := trimSpec(full, operations)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("spec", "api.github.com.json"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("spec/api.github.com.json: %d bytes (from %d)", len(spec), len(full))

	index, err := readFromTarball(tarball(webhooksPackage), webhooksFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, event := range webhookEvents {
		payloads, err := webhookExamples(index, event)
		if err != nil {
			t.Fatal(err)
		}
		pdir := filepath.Join("testdata", "webhooks", event)
		old, _ := filepath.Glob(filepath.Join(pdir, "*.json"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range slices.Sorted(maps.Keys(payloads)) {
			if err := os.WriteFile(filepath.Join(pdir, name), payloads[name], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %d %s payloads", pdir, len(payloads), event)
	}

	schema, err := readFromTarball(tarball(graphqlPackage), graphqlFile)
	if err != nil {
		t.Fatal(err)
	}
	trimmed, err := trimGraphQL(schema, graphqlKeep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("spec", "schema.graphql"), trimmed, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("spec/schema.graphql: %d bytes (from %d)", len(trimmed), len(schema))
}

// webhookEvents are the events whose examples testdata/webhooks/ holds.
var webhookEvents = []string{"pull_request", "issue_comment", "pull_request_review_comment", "pull_request_review_thread", "check_run", "workflow_run"}

// readFromTarball returns the file name from the gzipped tar file path.
func readFromTarball(path, name string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: no %s", path, name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}

// trimSpec cuts an OpenAPI description to the operations with the given
// operationIds and the components they reference, directly or through
// other components. Other methods of a kept path are dropped.
func trimSpec(full []byte, ops []string) ([]byte, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(full))
	dec.UseNumber() // ids and limits stay exactly as written
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	paths := map[string]any{}
	found := map[string]bool{}
	for path, item := range doc["paths"].(map[string]any) {
		kept := map[string]any{}
		for method, op := range item.(map[string]any) {
			if o, ok := op.(map[string]any); ok && slices.Contains(ops, fmt.Sprint(o["operationId"])) {
				kept[method] = op
				found[fmt.Sprint(o["operationId"])] = true
			}
		}
		if len(kept) > 0 {
			paths[path] = kept
		}
	}
	for _, op := range ops {
		if !found[op] {
			return nil, fmt.Errorf("operation %s is not in the description", op)
		}
	}

	// The closure of $refs: "#/components/<kind>/<name>".
	components := map[string]any{}
	todo := refs(paths, nil)
	seen := map[string]bool{}
	for len(todo) > 0 {
		ref := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[ref] {
			continue
		}
		seen[ref] = true
		parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
		if len(parts) != 3 || parts[0] != "components" {
			return nil, fmt.Errorf("unsupported $ref %q", ref)
		}
		kind, name := parts[1], parts[2]
		v, ok := doc["components"].(map[string]any)[kind].(map[string]any)[name]
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		if components[kind] == nil {
			components[kind] = map[string]any{}
		}
		components[kind].(map[string]any)[name] = v
		todo = refs(v, todo)
	}

	trimmed := map[string]any{
		"openapi":      doc["openapi"],
		"info":         doc["info"],
		"servers":      doc["servers"],
		"externalDocs": doc["externalDocs"],
		"paths":        paths,
		"components":   components,
		"x-warden-trimmed": map[string]any{
			"from":       openapiPackage + " " + strings.TrimPrefix(openapiFile, "package/"),
			"operations": ops,
			"how":        "go test ./internal/fakegithub -run TestRegenerate -regen",
		},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(trimmed); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// refs appends every "$ref" value in v to acc.
func refs(v any, acc []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if s, ok := v[k].(string); ok && k == "$ref" {
				acc = append(acc, s)
			} else {
				acc = refs(v[k], acc)
			}
		}
	case []any:
		for _, e := range v {
			acc = refs(e, acc)
		}
	}
	return acc
}

// webhookExamples returns the examples of event in the webhooks-examples
// index, indented, named "<nn>-<action>.json" in the index's order.
func webhookExamples(index []byte, event string) (map[string][]byte, error) {
	var events []struct {
		Name     string            `json:"name"`
		Examples []json.RawMessage `json:"examples"`
	}
	if err := json.Unmarshal(index, &events); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, ev := range events {
		if ev.Name != event {
			continue
		}
		for i, raw := range ev.Examples {
			var head struct{ Action string }
			if err := json.Unmarshal(raw, &head); err != nil {
				return nil, fmt.Errorf("%s example %d: %w", event, i, err)
			}
			var buf bytes.Buffer
			if err := json.Indent(&buf, raw, "", "  "); err != nil {
				return nil, err
			}
			buf.WriteByte('\n')
			out[fmt.Sprintf("%02d-%s.json", i+1, head.Action)] = buf.Bytes()
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s examples", event)
	}
	return out, nil
}
