package fakegithub

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// RuntimeClient is the runner's side of the Actions runtime services: what
// actions/cache and actions/upload-artifact do with a job's
// ACTIONS_RESULTS_URL and ACTIONS_RUNTIME_TOKEN. The act tier's stand-ins
// for those actions and the Action's tests use it, so that every save and
// restore goes through the fake's scoping rules. It is test support: the
// archive formats are its own (a cache is a gzipped tar, an artifact a
// zip of the files), the protocol is the services'.
type RuntimeClient struct {
	// ResultsURL is ACTIONS_RESULTS_URL; Token ACTIONS_RUNTIME_TOKEN.
	ResultsURL, Token string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
}

// ErrCacheDenied wraps a save or restore the cache service refused for
// the job's cache access (a read-only token, a cache-mode).
var ErrCacheDenied = errors.New("cache access denied")

// twirpStatusError is a Twirp error answer.
type twirpStatusError struct {
	Status    int
	Code, Msg string
}

func (e *twirpStatusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Msg)
}

func (c *RuntimeClient) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// call posts req to a Twirp method and decodes the answer into out.
func (c *RuntimeClient) call(ctx context.Context, service, method string, req, out any) error {
	body, _ := json.Marshal(req)
	u := strings.TrimSuffix(c.ResultsURL, "/") + "/twirp/" + service + "/" + method
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := c.http().Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var e twirpStatusError
		json.Unmarshal(raw, &e)
		e.Status = resp.StatusCode
		return &e
	}
	return json.Unmarshal(raw, out)
}

// blob sends method to a signed storage URL, without any token.
func (c *RuntimeClient) blob(ctx context.Context, method, u string, body []byte) ([]byte, error) {
	hr, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if method == http.MethodPut {
		hr.Header.Set("x-ms-blob-type", "BlockBlob")
	}
	resp, err := c.http().Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s storage: %s: %s", method, resp.Status, bytes.TrimSpace(data))
	}
	return data, err
}

// CacheVersion is the version a cache of paths is stored under: like
// actions/cache, a hash of the paths and the compression.
func CacheVersion(paths ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(append(paths, "gzip"), "|")))
	return hex.EncodeToString(sum[:])
}

// SaveCache archives dir and saves it under key and version (CacheVersion
// of the paths as the workflow names them) in the job's own scope. A
// refusal for the job's access wraps ErrCacheDenied; an existing key is
// not an error (actions/cache says so and goes on): saved is false.
func (c *RuntimeClient) SaveCache(ctx context.Context, key, version, dir string) (saved bool, err error) {
	archive, err := tarGz(dir)
	if err != nil {
		return false, err
	}
	var created struct {
		OK              bool   `json:"ok"`
		SignedUploadURL string `json:"signed_upload_url"`
		Message         string `json:"message"`
	}
	if err := c.call(ctx, cacheService, "CreateCacheEntry", map[string]any{"key": key, "version": version}, &created); err != nil {
		var te *twirpStatusError
		if errors.As(err, &te) && te.Status == http.StatusForbidden {
			return false, fmt.Errorf("%w: %v", ErrCacheDenied, err)
		}
		return false, err
	}
	if !created.OK {
		return false, nil
	}
	if _, err := c.blob(ctx, http.MethodPut, created.SignedUploadURL, archive); err != nil {
		return false, err
	}
	var fin struct {
		OK bool `json:"ok"`
	}
	err = c.call(ctx, cacheService, "FinalizeCacheEntryUpload", map[string]any{"key": key, "version": version, "size_bytes": strconv.Itoa(len(archive))}, &fin)
	return err == nil && fin.OK, err
}

// RestoreCache restores into dir the cache of version that key or
// restoreKeys match (see
// the service's search order) and returns the key it matched; "" for a
// miss. A refusal for the job's access wraps ErrCacheDenied.
func (c *RuntimeClient) RestoreCache(ctx context.Context, key string, restoreKeys []string, version, dir string) (string, error) {
	var got struct {
		OK                bool   `json:"ok"`
		SignedDownloadURL string `json:"signed_download_url"`
		MatchedKey        string `json:"matched_key"`
	}
	req := map[string]any{"key": key, "restore_keys": restoreKeys, "version": version}
	if err := c.call(ctx, cacheService, "GetCacheEntryDownloadURL", req, &got); err != nil {
		var te *twirpStatusError
		if errors.As(err, &te) && te.Status == http.StatusForbidden {
			return "", fmt.Errorf("%w: %v", ErrCacheDenied, err)
		}
		return "", err
	}
	if !got.OK {
		return "", nil
	}
	archive, err := c.blob(ctx, http.MethodGet, got.SignedDownloadURL, nil)
	if err != nil {
		return "", err
	}
	return got.MatchedKey, untarGz(archive, dir)
}

// backendIDs reads the run's and job's backend ids from the token's scp
// claim, as the runner's toolkit does.
func (c *RuntimeClient) backendIDs() (run, job string, err error) {
	parts := strings.Split(c.Token, ".")
	if len(parts) != 3 {
		return "", "", errors.New("the runtime token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", "", err
	}
	var claims struct {
		Scp string `json:"scp"`
	}
	json.Unmarshal(payload, &claims)
	for _, scope := range strings.Fields(claims.Scp) {
		if rest, ok := strings.CutPrefix(scope, "Actions.Results:"); ok {
			if run, job, ok := strings.Cut(rest, ":"); ok {
				return run, job, nil
			}
		}
	}
	return "", "", errors.New("the runtime token has no Actions.Results scope")
}

// UploadArtifact zips the files under dir and uploads them as artifact
// name of the job's run, kept retentionDays (0: the default); with
// overwrite an artifact of that name in the run is deleted first. It
// returns the artifact's id; an empty or missing dir uploads nothing
// (id 0), as upload-artifact's if-no-files-found: ignore.
func (c *RuntimeClient) UploadArtifact(ctx context.Context, name, dir string, retentionDays int, overwrite bool) (int64, error) {
	archive, n, err := zipDir(dir)
	if err != nil || n == 0 {
		return 0, err
	}
	return c.UploadArchive(ctx, name, archive, retentionDays, overwrite)
}

// UploadArchive uploads archive as the zip of artifact name, as it is: a
// test's way to upload what a hostile workflow could.
func (c *RuntimeClient) UploadArchive(ctx context.Context, name string, archive []byte, retentionDays int, overwrite bool) (int64, error) {
	run, job, err := c.backendIDs()
	if err != nil {
		return 0, err
	}
	ids := map[string]any{"workflow_run_backend_id": run, "workflow_job_run_backend_id": job, "name": name}
	if overwrite {
		var del struct{}
		if err := c.call(ctx, artifactService, "DeleteArtifact", ids, &del); err != nil {
			var te *twirpStatusError
			if !errors.As(err, &te) || te.Status != http.StatusNotFound {
				return 0, err
			}
		}
	}
	create := map[string]any{"workflow_run_backend_id": run, "workflow_job_run_backend_id": job, "name": name, "version": 4}
	if retentionDays > 0 {
		create["expires_at"] = time.Now().Add(time.Duration(retentionDays) * 24 * time.Hour).UTC().Format(time.RFC3339)
	}
	var created struct {
		OK              bool   `json:"ok"`
		SignedUploadURL string `json:"signed_upload_url"`
	}
	if err := c.call(ctx, artifactService, "CreateArtifact", create, &created); err != nil {
		return 0, err
	}
	if _, err := c.blob(ctx, http.MethodPut, created.SignedUploadURL, archive); err != nil {
		return 0, err
	}
	sum := sha256.Sum256(archive)
	fin := map[string]any{"workflow_run_backend_id": run, "workflow_job_run_backend_id": job, "name": name,
		"size": strconv.Itoa(len(archive)), "hash": map[string]any{"value": "sha256:" + hex.EncodeToString(sum[:])}}
	var done struct {
		OK         bool   `json:"ok"`
		ArtifactID string `json:"artifact_id"`
	}
	if err := c.call(ctx, artifactService, "FinalizeArtifact", fin, &done); err != nil {
		return 0, err
	}
	return strconv.ParseInt(done.ArtifactID, 10, 64)
}

// eachFile calls f with the slash path (relative to dir) and the content of
// each regular file under dir. A missing dir has no files.
func eachFile(dir string, f func(rel string, data []byte) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return fs.SkipAll
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return f(filepath.ToSlash(rel), data)
	})
}

// zipDir zips the regular files under dir, with paths relative to it, and
// counts them. A missing dir is no files.
func zipDir(dir string) ([]byte, int, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	n := 0
	err := eachFile(dir, func(rel string, data []byte) error {
		f, err := zw.Create(rel)
		if err != nil {
			return err
		}
		n++
		_, err = f.Write(data)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if err := zw.Close(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), n, nil
}

// tarGz archives the regular files under dir.
func tarGz(dir string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := eachFile(dir, func(rel string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o600, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// untarGz extracts archive into dir, refusing names that leave it.
func untarGz(archive []byte, dir string) error {
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(h.Name) {
			return fmt.Errorf("cache archive entry %q leaves the directory", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
	}
}
