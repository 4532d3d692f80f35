package openai_test

import (
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// A 400 whose message says the servers are overloaded is an overload to
// retry; another 400 is a bad request.
func TestA400ThatSaysOverloadedIsAnOverload(t *testing.T) {
	for _, tc := range []struct {
		message string
		class   retry.Class
	}{
		{"The server is currently overloaded with other requests. Sorry about that!", retry.ClassOverloaded},
		{"Invalid value for 'temperature'", retry.ClassOther},
	} {
		err := openai.AdaptError(&oai.Error{StatusCode: 400, Message: tc.message})
		if got := retry.ClassOf(err); got != tc.class {
			t.Errorf("%q: class %s, want %s", tc.message, got, tc.class)
		}
	}
}
