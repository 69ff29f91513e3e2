package fakeopenai

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Transport is an in-memory http.RoundTripper that calls Handler directly,
// for tests inside a synctest bubble (a real socket is never durably
// blocked). The handler runs on its own goroutine and writes the response
// through an io.Pipe, so a slow or stalled stream is read exactly as a real
// one; when the request's context ends, the pipe is closed with its cause,
// as net/http does. Handlers must return when r.Context() is done.
//
// The ResponseWriter a handler gets is also an http.Flusher (whose Flush
// does nothing: every write already reaches the reader). A handler that
// writes nothing answers 200.
type Transport struct {
	Handler http.Handler
}

// RoundTrip implements http.RoundTripper. It returns when the handler has
// written its status line (or its first byte), or with the context's error
// when the request ends first.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(context.Cause(ctx)) })
	go func() { // ends when the handler returns; handlers return when ctx ends
		defer pw.Close()
		defer w.WriteHeader(http.StatusOK) // a handler that wrote nothing answers 200
		t.Handler.ServeHTTP(w, req)
	}()
	select {
	case <-w.ready:
	case <-ctx.Done():
		stop()
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header.Clone(),
		Body:          &pipeBody{PipeReader: pr, stop: stop},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeBody is a response body; closing it stops watching the request's
// context.
type pipeBody struct {
	*io.PipeReader
	stop func() bool
}

func (b *pipeBody) Close() error {
	b.stop()
	return b.PipeReader.Close()
}

// pipeWriter is the handler's http.ResponseWriter: the status is fixed by
// the first WriteHeader or Write, which also releases RoundTrip.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	once   sync.Once
	status int
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status = status
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush implements http.Flusher; writes are unbuffered, so it does nothing.
func (w *pipeWriter) Flush() {}
