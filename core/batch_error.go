package core

import "fmt"

// BatchError reports the items of a Batch that failed. Errs is index-aligned
// with the batch's inputs: Errs[i] is nil when item i succeeded.
type BatchError struct {
	Errs []error
}

// Error summarises how many items failed and quotes the first failure.
// Like every method of BatchError, it accepts a nil receiver.
func (e *BatchError) Error() string {
	if e == nil {
		return "batch: <nil>"
	}
	failed, first := 0, -1
	for i, err := range e.Errs {
		if err != nil {
			failed++
			if first < 0 {
				first = i
			}
		}
	}
	if failed == 0 {
		return fmt.Sprintf("batch: 0 of %d items failed", len(e.Errs))
	}
	return fmt.Sprintf("batch: %d of %d items failed; item %d: %v", failed, len(e.Errs), first, e.Errs[first])
}

// Unwrap returns the non-nil item errors, so errors.Is and errors.As look
// through a BatchError at every failed item.
func (e *BatchError) Unwrap() []error {
	if e == nil {
		return nil
	}
	errs := make([]error, 0, len(e.Errs))
	for _, err := range e.Errs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
