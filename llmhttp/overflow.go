package llmhttp

import (
	"errors"
	"regexp"
	"strconv"
)

// Overflow is what a provider said of a request too large for the model's
// context window, or for a per-minute token limit: the limit, the tokens
// of the input and of the output the request asked for, and their total.
// A count the message did not give is 0.
type Overflow struct {
	Limit     int // the context window, or the token limit, in tokens
	Input     int // the request's input tokens
	Output    int // the output tokens the request asked for (its max tokens)
	Requested int // what the request needed in all: more than Limit
}

// overflowForms are the wordings ParseOverflow reads, each with the
// fields its numbered groups fill, in order.
var overflowForms = []struct {
	re     *regexp.Regexp
	fields []func(*Overflow) *int
}{
	// OpenAI, and vLLM and LiteLLM, which repeat it: "This model's maximum
	// context length is 128000 tokens. However, you requested 130532
	// tokens (126532 in the messages, 4000 in the completion)." The
	// functions' tokens, when named, are input.
	{regexp.MustCompile(`maximum context length is (\d+) tokens\. However, you requested (\d+) tokens \((\d+) in the messages, (?:(\d+) in the functions, )?(\d+) in the completion\)`),
		fields(limit, requested, input, input, output)},
	// vLLM: "... However, you requested 1000 output tokens and your prompt
	// contains at least 32001 input tokens, for a total of at least 33001
	// tokens."
	{regexp.MustCompile(`maximum context length is (\d+) tokens\. However, you requested (\d+) output tokens and your prompt contains at least (\d+) input tokens, for a total of at least (\d+) tokens`),
		fields(limit, output, input, requested)},
	// vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 8000.
	// This model's maximum context length is 4096 tokens and your request
	// has 2778 input tokens".
	{regexp.MustCompile(`is too large: (\d+)\. This model's maximum context length is (\d+) tokens and your request has (\d+) input tokens`),
		fields(output, limit, input)},
	// OpenAI: "... However, your messages resulted in 130532 tokens."; vLLM:
	// "... However, your request has 4176 input tokens."
	{regexp.MustCompile(`maximum context length is (\d+) tokens\.? However, (?:your messages resulted in|your request has) (\d+) (?:input )?tokens`),
		fields(limit, input)},
	// OpenAI's 429: "Request too large for gpt-4o in organization org-x on
	// tokens per min (TPM): Limit 30000, Requested 45000."
	{regexp.MustCompile(`Request too large for .{0,200}?: Limit (\d+), Requested (\d+)`),
		fields(limit, requested)},
	// Anthropic: "input length and `max_tokens` exceed context limit:
	// 197202 + 21333 > 200000".
	{regexp.MustCompile("input length and `?max_tokens`? exceed context limit: (\\d+) \\+ (\\d+) > (\\d+)"),
		fields(input, output, limit)},
	// Anthropic: "prompt is too long: 208451 tokens > 200000 maximum".
	{regexp.MustCompile(`prompt is too long: (\d+) tokens > (\d+) maximum`),
		fields(input, limit)},
	// Gemini: "The input token count (1054016) exceeds the maximum number
	// of tokens allowed (1048576)."
	{regexp.MustCompile(`input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)`),
		fields(input, limit)},
}

func limit(o *Overflow) *int     { return &o.Limit }
func input(o *Overflow) *int     { return &o.Input }
func output(o *Overflow) *int    { return &o.Output }
func requested(o *Overflow) *int { return &o.Requested }

func fields(f ...func(*Overflow) *int) []func(*Overflow) *int { return f }

// ParseOverflow reads an overflow from err: an *APIError's provider
// message (see APIError.Message), else err's own text. It knows the
// wordings of OpenAI (the 400 context_length_exceeded and the 429
// "Request too large … Limit L, Requested R"), Anthropic ("input length
// and max_tokens exceed context limit: I + O > L", "prompt is too long: I
// tokens > L maximum"), Gemini ("The input token count (I) exceeds the
// maximum number of tokens allowed (L)") and OpenAI-compatible servers
// (vLLM, and LiteLLM, which repeats its upstream's message). A wording it
// does not know, or numbers that do not add up to an overflow (a total
// within the limit, a count beyond int), is false: it never guesses.
// Requested is filled in as Input + Output when the message gave both but
// not the total.
func ParseOverflow(err error) (Overflow, bool) {
	if err == nil {
		return Overflow{}, false
	}
	if a, ok := errors.AsType[*APIError](err); ok && a.Message != "" {
		if o, ok := parseOverflow(a.Message); ok {
			return o, true
		}
	}
	return parseOverflow(err.Error())
}

// parseOverflow reads the first known wording in msg.
func parseOverflow(msg string) (Overflow, bool) {
	for _, f := range overflowForms {
		m := f.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		var o Overflow
		for i, field := range f.fields {
			if m[i+1] == "" {
				continue // an optional group the message left out
			}
			n, err := strconv.Atoi(m[i+1])
			if err != nil {
				return Overflow{}, false // beyond int
			}
			p := field(&o)
			if *p+n < *p {
				return Overflow{}, false
			}
			*p += n
		}
		return o.complete()
	}
	return Overflow{}, false
}

// complete fills in Requested and checks that o is an overflow.
func (o Overflow) complete() (Overflow, bool) {
	if o.Requested == 0 {
		if o.Input+o.Output < o.Input { // overflows int
			return Overflow{}, false
		}
		o.Requested = o.Input + o.Output
	}
	if o.Limit <= 0 || o.Requested <= o.Limit || o.Input > o.Requested || o.Output > o.Requested {
		return Overflow{}, false
	}
	return o, true
}

// FitOutput returns the output limit that makes the request fit o.Limit:
// the output it asked for (o.Output, or current when the message did not
// say) less what it went over by. A repair that retries with a smaller
// max-tokens sets it to n. ok is false when nothing fits: the input alone
// fills the limit, no output is left, or the output asked for is unknown
// (current 0).
func (o Overflow) FitOutput(current int) (n int, ok bool) {
	asked := o.Output
	if asked == 0 {
		asked = current
	}
	if asked <= 0 || o.Input >= o.Limit {
		return 0, false
	}
	n = asked - (o.Requested - o.Limit)
	return n, n > 0
}
