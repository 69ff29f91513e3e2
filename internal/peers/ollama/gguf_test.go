package ollama

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestWriteTinyModel checks the file without a server: GGUF version 3 with
// 21 tensors, about 0.5 MB, the same bytes for the same seed.
func TestWriteTinyModel(t *testing.T) {
	t.Parallel()
	write := func(seed uint64) []byte {
		t.Helper()
		var b bytes.Buffer
		if err := WriteTinyModel(&b, seed); err != nil {
			t.Fatalf("WriteTinyModel(%d) = %v", seed, err)
		}
		return b.Bytes()
	}
	a, b, c := write(42), write(42), write(43)
	if len(a) < 400_000 || len(a) > 600_000 {
		t.Errorf("WriteTinyModel(42) wrote %d bytes, want about 0.5 MB", len(a))
	}
	if !bytes.Equal(a, b) {
		t.Errorf("WriteTinyModel(42) wrote different bytes twice")
	}
	if bytes.Equal(a, c) {
		t.Errorf("WriteTinyModel(42) and WriteTinyModel(43) wrote the same bytes")
	}
	le := binary.LittleEndian
	if string(a[:4]) != "GGUF" || le.Uint32(a[4:]) != 3 || le.Uint64(a[8:]) != 3+9*tinyLayers || le.Uint64(a[16:]) != 22 {
		t.Errorf("header = %q version %d, %d tensors, %d keys; want GGUF 3, %d tensors, 22 keys",
			a[:4], le.Uint32(a[4:]), le.Uint64(a[8:]), le.Uint64(a[16:]), 3+9*tinyLayers)
	}
	if len(a)%ggufAlignment != 0 {
		t.Errorf("file length %d is not a multiple of the alignment %d", len(a), ggufAlignment)
	}
}
