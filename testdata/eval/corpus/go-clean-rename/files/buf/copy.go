package buf

// Fits reports whether need bytes fit in buf.
func Fits(buf []byte, need int) bool {
	return need <= len(buf)
}

// Copy copies src into dst and reports how many bytes it copied.
func Copy(dst, src []byte) int {
	copied := copy(dst, src)
	return copied
}
