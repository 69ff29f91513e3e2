package ollama

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// The shape of the tiny model: a llama-architecture transformer small
// enough to write in a test (about 0.5 MB of float32 weights) that a real
// llama.cpp loads and runs. Its answers are noise, which is the point: a
// real server's constrained decoding, truncation and usage accounting are
// exercised without a real model.
const (
	tinyEmbedding   = 64
	tinyLayers      = 2
	tinyHeads       = 4
	tinyFeedForward = 128
	tinyTrainCtx    = 2048
	// TinyVocab is the vocabulary size: <unk>, <s>, </s> and one token per
	// byte, <0x00>..<0xFF>. Every text tokenizes byte by byte (a space is
	// SentencePiece's "▁", three bytes), so a prompt costs at least one
	// token per byte.
	TinyVocab = 3 + 256
)

// GGUF value types (ggml's gguf.h).
const (
	ggufUint32  = 4
	ggufInt32   = 5
	ggufFloat32 = 6
	ggufBool    = 7
	ggufString  = 8
	ggufArray   = 9
)

// llama.cpp token types.
const (
	tokenUnknown = 2
	tokenControl = 3
	tokenByte    = 6
)

const ggufAlignment = 32

// favourBias is the output weight that makes the model favour '"' and '{'
// (see WriteTinyModel).
const favourBias = 0.5

// WriteTinyModel writes a GGUF (version 3) file of a tiny llama model to w:
// embedding 64, 2 layers, 4 heads, feed-forward 128, float32 weights drawn
// from a PCG seeded with seed (the same seed writes the same bytes), and a
// byte-level SentencePiece vocabulary of TinyVocab tokens. The model
// favours two tokens, '"' and '{', so that JSON it writes under a grammar
// has short strings and some objects. It returns the first write error.
func WriteTinyModel(w io.Writer, seed uint64) error {
	bw := bufio.NewWriter(w)
	g := &ggufWriter{w: bw}
	tensors := tinyTensors()
	kvs := tinyMetadata()

	// Header.
	g.raw([]byte("GGUF"))
	g.u32(3)
	g.u64(uint64(len(tensors)))
	g.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		g.str(kv.key)
		g.value(kv.val)
	}
	sizes := g.tensorInfos(tensors)
	g.tinyWeights(tensors, sizes, seed)
	if g.err != nil {
		return fmt.Errorf("write tiny model: %w", g.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write tiny model: %w", err)
	}
	return nil
}

// ggufKV is one metadata entry.
type ggufKV struct {
	key string
	val any
}

// tinyMetadata is the tiny model's metadata: a llama of the tiny sizes
// with a byte-level SentencePiece vocabulary.
func tinyMetadata() []ggufKV {
	tokens := make([]string, 0, TinyVocab)
	types := make([]int32, 0, TinyVocab)
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = append(types, tokenUnknown, tokenControl, tokenControl)
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, tokenByte)
	}
	scores := make([]float32, TinyVocab)
	arch := "llama."
	return []ggufKV{
		{"general.architecture", "llama"},
		{"general.name", "warden-tiny"},
		{"general.file_type", uint32(0)}, // all float32
		{arch + "context_length", uint32(tinyTrainCtx)},
		{arch + "embedding_length", uint32(tinyEmbedding)},
		{arch + "block_count", uint32(tinyLayers)},
		{arch + "feed_forward_length", uint32(tinyFeedForward)},
		{arch + "attention.head_count", uint32(tinyHeads)},
		{arch + "attention.head_count_kv", uint32(tinyHeads)},
		{arch + "attention.layer_norm_rms_epsilon", float32(1e-5)},
		{arch + "rope.dimension_count", uint32(tinyEmbedding / tinyHeads)},
		{arch + "rope.freq_base", float32(10000)},
		{arch + "vocab_size", uint32(TinyVocab)},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
	}
}

// ggufTensor is one tensor of the model.
type ggufTensor struct {
	name string
	dims []uint64 // ggml order: dims[0] is the row length
	norm bool     // a norm weight: all ones
}

// tinyTensors lists the tiny model's tensors, in file order.
func tinyTensors() []ggufTensor {
	tensors := []ggufTensor{
		{name: "token_embd.weight", dims: []uint64{tinyEmbedding, TinyVocab}},
		{name: "output_norm.weight", dims: []uint64{tinyEmbedding}, norm: true},
		{name: "output.weight", dims: []uint64{tinyEmbedding, TinyVocab}},
	}
	for l := range tinyLayers {
		p := fmt.Sprintf("blk.%d.", l)
		tensors = append(tensors,
			ggufTensor{name: p + "attn_norm.weight", dims: []uint64{tinyEmbedding}, norm: true},
			ggufTensor{name: p + "attn_q.weight", dims: []uint64{tinyEmbedding, tinyEmbedding}},
			ggufTensor{name: p + "attn_k.weight", dims: []uint64{tinyEmbedding, tinyEmbedding}},
			ggufTensor{name: p + "attn_v.weight", dims: []uint64{tinyEmbedding, tinyEmbedding}},
			ggufTensor{name: p + "attn_output.weight", dims: []uint64{tinyEmbedding, tinyEmbedding}},
			ggufTensor{name: p + "ffn_norm.weight", dims: []uint64{tinyEmbedding}, norm: true},
			ggufTensor{name: p + "ffn_gate.weight", dims: []uint64{tinyEmbedding, tinyFeedForward}},
			ggufTensor{name: p + "ffn_down.weight", dims: []uint64{tinyFeedForward, tinyEmbedding}},
			ggufTensor{name: p + "ffn_up.weight", dims: []uint64{tinyEmbedding, tinyFeedForward}},
		)
	}
	return tensors
}

// tensorInfos writes the tensor infos, with offsets into the data section,
// and returns each tensor's size in bytes.
func (g *ggufWriter) tensorInfos(tensors []ggufTensor) []uint64 {
	var offset uint64
	sizes := make([]uint64, len(tensors))
	for i, t := range tensors {
		n := uint64(1)
		for _, d := range t.dims {
			n *= d
		}
		sizes[i] = n * 4
		g.str(t.name)
		g.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			g.u64(d)
		}
		g.u32(0) // GGML_TYPE_F32
		g.u64(offset)
		offset = align(offset + sizes[i])
	}
	g.pad()
	return sizes
}

// tinyWeights writes the data: small normal weights, so the logits are
// nearly flat and the model samples almost uniformly among the tokens a
// grammar allows; with two exceptions. Every token's embedding has a 1 in
// dimension 0, which the small layers barely change, and the output rows of
// '"' and '{' have favourBias there: those two get a logit of about 4
// where the others get about 0. Under a JSON-schema grammar, a string
// (where some 230 tokens are allowed) then ends after a few bytes instead
// of about 250, and a findings array (where '{', ']' and white space are
// allowed) most often gets a finding: a schema-constrained answer is a few
// hundred tokens with a finding or two of nonsense in it.
func (g *ggufWriter) tinyWeights(tensors []ggufTensor, sizes []uint64, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	favoured := func(row uint64) bool { return row == 3+'"' || row == 3+'{' }
	for i, t := range tensors {
		for k := range sizes[i] / 4 {
			v := float32(1)
			if !t.norm {
				v = float32(rng.NormFloat64() * 0.02)
			}
			row, col := k/tinyEmbedding, k%tinyEmbedding
			switch {
			case t.name == "token_embd.weight" && col == 0:
				v = 1
			case t.name == "output.weight" && col == 0 && favoured(row):
				v = favourBias
			}
			g.u32(math.Float32bits(v))
		}
		g.pad()
	}
}

func align(n uint64) uint64 { return (n + ggufAlignment - 1) / ggufAlignment * ggufAlignment }

// ggufWriter writes little-endian GGUF fields and keeps the first error.
type ggufWriter struct {
	w   io.Writer
	n   uint64 // bytes written
	err error
}

func (g *ggufWriter) raw(b []byte) {
	if g.err != nil {
		return
	}
	var n int
	n, g.err = g.w.Write(b)
	g.n += uint64(n)
}

func (g *ggufWriter) u32(v uint32) { g.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (g *ggufWriter) u64(v uint64) { g.raw(binary.LittleEndian.AppendUint64(nil, v)) }

func (g *ggufWriter) str(s string) {
	g.u64(uint64(len(s)))
	g.raw([]byte(s))
}

// pad writes zeros up to the next alignment boundary.
func (g *ggufWriter) pad() {
	if rem := align(g.n) - g.n; rem > 0 {
		g.raw(make([]byte, rem))
	}
}

// value writes a typed value: its type, then the value.
func (g *ggufWriter) value(v any) {
	switch v := v.(type) {
	case uint32:
		g.u32(ggufUint32)
		g.u32(v)
	case float32:
		g.u32(ggufFloat32)
		g.u32(math.Float32bits(v))
	case bool:
		g.u32(ggufBool)
		b := byte(0)
		if v {
			b = 1
		}
		g.raw([]byte{b})
	case string:
		g.u32(ggufString)
		g.str(v)
	case []string:
		g.u32(ggufArray)
		g.u32(ggufString)
		g.u64(uint64(len(v)))
		for _, s := range v {
			g.str(s)
		}
	case []float32:
		g.u32(ggufArray)
		g.u32(ggufFloat32)
		g.u64(uint64(len(v)))
		for _, f := range v {
			g.u32(math.Float32bits(f))
		}
	case []int32:
		g.u32(ggufArray)
		g.u32(ggufInt32)
		g.u64(uint64(len(v)))
		for _, x := range v {
			g.u32(uint32(x))
		}
	default:
		if g.err == nil {
			g.err = fmt.Errorf("gguf: unsupported value type %T", v)
		}
	}
}
