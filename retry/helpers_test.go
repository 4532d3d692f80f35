package retry

import "errors"

var errFlaky = errors.New("flaky")
