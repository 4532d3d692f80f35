// Package repair fixes an LLM's answer in place, at no cost, before a
// retry layer pays for another: JSON with the faults models make (a code
// fence or prose around it, trailing commas, single quotes, unquoted keys,
// Python's literals, comments, a truncated tail, an array sent as a
// string), and a tool name that is one letter off or in the wrong case.
//
// Each returns what it fixed and whether it could: a fix is only ever a
// candidate, which the check that rejected the answer must accept before
// it is delivered, as retry.RetryConfig's RepairOutput does:
//
//	cfg.CheckOutput = checkReport // parses and validates the JSON
//	cfg.RepairOutput = func(_ context.Context, _, out any, _ error) (any, bool) {
//		s, ok := out.(string)
//		if !ok {
//			return nil, false
//		}
//		return repair.JSON(s)
//	}
//
// A repair never makes an answer out of nothing: an empty or blank result,
// or an empty object or array made from a text that was not one, is not
// a fix.
package repair
