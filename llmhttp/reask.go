package llmhttp

import (
	"fmt"
	"strings"
)

// ReaskText is what a re-ask tells a model of its answer that a check
// rejected: what the check said (reason, as retry.RejectedOutput gives
// it), and, where the answer did not end on its own (finish: Truncated or
// Filtered, from the provider's finish reason; nil when it ended), what
// happened to it, so that no model is asked again blindly. Each provider
// module's Reask sends it in the user turn the re-ask ends on.
func ReaskText(reason error, finish *AnswerError) string {
	var b strings.Builder
	b.WriteString("Your previous answer was rejected")
	if reason != nil {
		fmt.Fprintf(&b, ": %v", reason)
	}
	b.WriteString(".")
	if finish != nil {
		switch finish.Kind {
		case Truncated:
			fmt.Fprintf(&b, " It was cut off at the output token limit (finish reason %s): give a complete answer that fits, shorter if need be.", finish.FinishReason)
		case Filtered:
			fmt.Fprintf(&b, " It was stopped by the content filter (finish reason %s): answer within the content policy, or say that you cannot.", finish.FinishReason)
		}
	}
	b.WriteString(" Answer again.")
	return b.String()
}
