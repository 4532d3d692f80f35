// Package batchcheck reads the answer of an inner Batch, the one place
// where the Batch contract (core.Runnable) is checked by the decorators
// that look at items: retry and fallback.
package batchcheck

import (
	"errors"
	"fmt"

	"github.com/steadfast-go/steadfast/core"
)

// Items returns the error of each of n items sent to a Batch that answered
// outs and err: nil for an item that succeeded. A *core.BatchError gives
// each item its own; any other error is the whole batch's, and whole is
// true (errs then holds err for every item). When the answer breaks the
// Batch contract (too few or too many outputs or item errors, a nil
// *core.BatchError), bad says how, and errs is nil.
func Items(n int, outs []any, err error) (errs []error, whole bool, bad error) {
	be, isBatch := errors.AsType[*core.BatchError](err)
	switch {
	case err == nil:
		if len(outs) != n {
			return nil, false, fmt.Errorf("inner Batch returned %d outputs for %d inputs", len(outs), n)
		}
		return make([]error, n), false, nil
	case isBatch && be == nil:
		return nil, false, errors.New("inner Batch returned a nil *core.BatchError as its error")
	case isBatch:
		if len(be.Errs) != n {
			return nil, false, fmt.Errorf("inner Batch returned %d item errors for %d inputs: %w", len(be.Errs), n, err)
		}
		if len(outs) != n && Failed(be) != n {
			return nil, false, fmt.Errorf("inner Batch returned %d outputs for %d inputs: %w", len(outs), n, err)
		}
		return be.Errs, false, nil
	}
	errs = make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs, true, nil
}

// Failed counts the failed items of a *core.BatchError.
func Failed(be *core.BatchError) int {
	n := 0
	for _, err := range be.Errs {
		if err != nil {
			n++
		}
	}
	return n
}
