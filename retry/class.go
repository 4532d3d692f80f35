package retry

import (
	"github.com/steadfast-go/steadfast/internal/errproto"
)

// Class is a class of failure, for RetryConfig.MaxRetriesByClass and the
// retry.class attribute of a failed attempt's span.
type Class string

// The classes of failure. ClassOf says which a failure is.
const (
	ClassRateLimit  Class = errproto.ClassRateLimit  // 429
	ClassOverloaded Class = errproto.ClassOverloaded // 503, 529
	ClassServer     Class = errproto.ClassServer     // another 5xx
	ClassTimeout    Class = errproto.ClassTimeout    // 408, 504, an attempt's timeout, a stall, a network timeout
	ClassConnection Class = errproto.ClassConnection // a connection reset, refused or closed; an unexpected EOF
	ClassOther      Class = errproto.ClassOther      // anything else
)

// classes lists every Class, in the order of their tallies.
var classes = [...]Class{ClassRateLimit, ClassOverloaded, ClassServer, ClassTimeout, ClassConnection, ClassOther}

// ClassOf returns the class of failure err is: by its status (429
// rate_limit; 503 and 529 overloaded; 408 and 504 timeout; another 5xx
// server), else by its error.type (timeout, deadline_exceeded,
// stream_stalled: timeout), else connection for a connection reset,
// refused or closed, an unexpected EOF or another network error, else
// other. Every package of steadfast classifies alike.
func ClassOf(err error) Class { return Class(errproto.Class(err)) }

// index returns c's place in classes, -1 for a name that is none.
func (c Class) index() int {
	for i, k := range classes {
		if k == c {
			return i
		}
	}
	return -1
}

// classTally counts the retries a call (or a Batch item) made after
// failures of each class.
type classTally [len(classes)]int
