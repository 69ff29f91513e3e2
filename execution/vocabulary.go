package execution

// Classes lists every class, in the order of their values: the vocabulary
// a failed item's class comes from, for every sink that explains one.
func Classes() []Class {
	out := make([]Class, len(classNames))
	for i := range out {
		out[i] = Class(i)
	}
	return out
}

// SkipReasons lists every Result.Reason of a skipped item.
var SkipReasons = []string{ReasonBudget, ReasonBudgetCost, ReasonBudgetTokens, ReasonCancelled}
