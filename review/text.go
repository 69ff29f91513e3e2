package review

// Plural is one when n is 1, else many: the one plural of every message
// and sink ("1 finding was", "3 findings were").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
