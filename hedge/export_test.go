package hedge

// ErrLost is the cause of a losing attempt's context, for the tests.
var ErrLost = errLost
