package callspan

// Method is the Runnable method a decorator's call was made through: the
// closed set of values of its method attribute (retry.method,
// fallback.method, hedge.method).
type Method uint8

// The methods, and their number.
const (
	Invoke Method = iota
	Batch
	Stream
	Methods
)

var methodNames = [Methods]string{"invoke", "batch", "stream"}

// String returns the method's attribute value.
func (m Method) String() string { return methodNames[m] }
