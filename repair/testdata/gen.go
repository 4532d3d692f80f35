//go:build ignore

// gen writes corpus.json: malformed model outputs, each with the kind of
// fault, what produces it, and what a repair should give. Run it from
// repair/ with: go run ./testdata/gen.go
//
// The answers are typical structured outputs of LLM applications
// (extraction, classification, tool arguments, citations, plans), each
// broken the ways models break them. Truncations cut a member in its
// middle: want holds the members before it, which a repair must keep.
package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

type member struct {
	key   string
	value string // JSON
}

type entry struct {
	Kind   string          `json:"kind"`
	Source string          `json:"source"`
	Output string          `json:"output"`
	Want   json.RawMessage `json:"want,omitempty"` // the repaired JSON; absent where none should be made
	Tools  []string        `json:"tools,omitempty"`
	Tool   string          `json:"tool,omitempty"` // the tool name a repair should give; "" for none
}

var answers = [][]member{
	{{"name", `"Ada Lovelace"`}, {"born", `1815`}, {"fields", `["mathematics","computing"]`}},
	{{"sentiment", `"negative"`}, {"confidence", `0.92`}, {"reasons", `["late delivery","no refund"]`}},
	{{"city", `"Lyon"`}, {"unit", `"celsius"`}, {"days", `3`}},
	{{"query", `"retry budget grpc"`}, {"top_k", `5`}, {"filters", `{"year":2024,"lang":"en"}`}},
	{{"answer", `"The limit is 60 requests a minute."`}, {"citations", `[{"doc":"limits.md","line":12}]`}},
	{{"steps", `["search the docs","read the pricing page","summarise"]`}, {"done", `false`}},
	{{"title", `"Quarterly report"`}, {"tags", `["finance","q3"]`}, {"draft", `true`}, {"owner", `null`}},
	{{"intent", `"cancel_subscription"`}, {"slots", `{"plan":"pro","reason":"price"}`}},
	{{"sql", `"SELECT id FROM users WHERE active = 1"`}, {"tables", `["users"]`}},
	{{"language", `"go"`}, {"score", `87`}, {"issues", `[{"line":4,"msg":"unused variable"}]`}},
	{{"to", `"ops@example.com"`}, {"subject", `"Outage follow-up"`}, {"priority", `"high"`}},
	{{"product", `"headphones"`}, {"price", `129.99`}, {"in_stock", `true`}},
	{{"label", `"spam"`}, {"probability", `0.08`}},
	{{"entities", `[{"type":"person","text":"Grace Hopper"},{"type":"org","text":"Navy"}]`}},
	{{"from", `"EUR"`}, {"to", `"USD"`}, {"amount", `250`}},
	{{"verdict", `"pass"`}, {"checks", `{"tests":true,"lint":true}`}, {"notes", `""`}},
	{{"summary", `"Two services timed out after the deploy."`}, {"severity", `2`}},
	{{"lat", `48.8566`}, {"lon", `2.3522`}, {"place", `"Paris"`}},
	{{"rating", `4`}, {"pros", `["battery"]`}, {"cons", `["weight","price"]`}},
	{{"model", `"gpt-4.1-mini"`}, {"max_tokens", `512`}, {"stream", `false`}},
}

func object(ms []member, sep string) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%q:%s%s", m.key, sep, m.value)
	}
	return "{" + strings.Join(parts, ","+sep) + "}"
}

func main() {
	rng := rand.New(rand.NewPCG(2026, 12))
	var out []entry
	add := func(kind, source, output, want string) {
		e := entry{Kind: kind, Source: source, Output: output}
		if want != "" {
			e.Want = json.RawMessage(want)
		}
		out = append(out, e)
	}
	for _, a := range answers {
		good := object(a, " ")
		add("fence", "a chat model wrapping its JSON in a markdown code fence", "```json\n"+good+"\n```", good)
		add("prose", "a model that introduces and comments its answer", "Sure! Here is the result:\n"+good+"\nLet me know if you need anything else.", good)
		add("trailing_comma", "a model writing JavaScript-style trailing commas", strings.Replace(good, "}", ",}", 1), good)
		add("single_quotes", "a model writing a Python dict", strings.ReplaceAll(strings.ReplaceAll(good, `"`, `'`), "\\'", `"`), good)
		unquoted := good
		for _, m := range a {
			unquoted = strings.Replace(unquoted, fmt.Sprintf("%q:", m.key), m.key+":", 1)
		}
		add("unquoted_keys", "a model writing a JavaScript object literal", unquoted, good)
		py := strings.NewReplacer("true", "True", "false", "False", "null", "None").Replace(good)
		add("python_literals", "a model writing Python's True, False and None", py, good)
		add("comments", "a model annotating its JSON with comments", strings.Replace(good, "{", "{ // the answer\n", 1), good)
		add("fence_trailing_comma", "a fenced answer with a trailing comma", "```\n"+strings.Replace(good, "}", ", }", 1)+"\n```", good)
		// A cut inside the last member: the members before it survive.
		last := a[len(a)-1]
		head := object(a[:len(a)-1], " ")
		cutAt := 1 + rng.IntN(len(last.value))
		cut := strings.TrimSuffix(head, "}")
		if len(a) > 1 {
			cut += ", "
		}
		cut += fmt.Sprintf("%q: %s", last.key, last.value[:cutAt])
		add("truncated_tail", "max_tokens cutting the answer off", cut, head) // head is {} for one member
		if len(a) > 1 {
			add("truncated_after_key", "max_tokens cutting the answer after a key", strings.TrimSuffix(head, "}")+fmt.Sprintf(", %q:", last.key), head)
		}
	}
	// Arrays and objects sent as strings.
	for _, a := range answers {
		for _, m := range a {
			if strings.HasPrefix(m.value, "[") {
				var ms []member
				for _, o := range a {
					if o.key == m.key {
						ms = append(ms, member{o.key, fmt.Sprintf("%q", o.value)})
					} else {
						ms = append(ms, o)
					}
				}
				add("array_as_string", "a model sending a list as a string of JSON", object(ms, " "), object(a, " "))
				break
			}
		}
	}
	// Missing commas between elements and members.
	for _, a := range answers[:10] {
		good := object(a, " ")
		add("missing_comma", "a model dropping the comma between members", strings.Replace(good, `, "`, ` "`, 1), good)
	}
	// Harder faults, some beyond a syntactic repair: want is what a
	// careful reader would take the answer to be.
	for _, h := range []struct{ output, want string }{
		{`{"quote": "He said "hello" to me", "n": 1}`, `{"quote":"He said \"hello\" to me","n":1}`},
		{`{"a": 1}{"b": 2}`, `{"a":1}`},
		{"**Answer:** `{\"ok\": true}`", `{"ok":true}`},
		{"{\"text\": \"line one\nline two\", \"n\": 2}", `{"text":"line one\nline two","n":2}`},
		{`{"price": 1,299.00, "currency": "USD"}`, `{"price":1299.00,"currency":"USD"}`},
		{`{"items": [1, 2, 3`, `{"items":[1,2,3]}`},
		{`{"ok": yes}`, `{"ok":true}`},
		{`{"name": 'O'Brien'}`, `{"name":"O'Brien"}`},
		{`[{"id": 1}, {"id": 2}, {"id": 3`, `[{"id":1},{"id":2},{"id":3}]`},
		{`{"a": NaN, "b": Infinity}`, `{"a":null,"b":null}`},
	} {
		add("hard", "faults models make that a syntactic repair may not undo", h.output, h.want)
	}
	// What no repair should make an answer of.
	for _, s := range []string{
		"I'm sorry, I can't help with that.",
		"{",
		"```json\n```",
		"name: Ada\nborn: 1815",
		"[",
		"   ",
		"The answer is 42.",
		"{ // nothing yet",
	} {
		add("no_answer", "a refusal, an empty fence, YAML, or a cut before any content", s, "")
	}
	// Tool names.
	tools := []string{"get_weather", "search_docs", "send_email", "create_ticket", "lookup_order_status", "get_forecast"}
	for _, tc := range []struct{ kind, source, name, want string }{
		{"tool_case", "a model changing a tool name's case", "Get_Weather", "get_weather"},
		{"tool_case", "a model changing a tool name's case", "SEND_EMAIL", "send_email"},
		{"tool_case", "a model changing a tool name's case", "Search_Docs", "search_docs"},
		{"tool_style", "a model writing a tool name in camelCase", "getWeather", "get_weather"},
		{"tool_style", "a model writing a tool name in camelCase", "createTicket", "create_ticket"},
		{"tool_style", "a model writing a tool name in kebab-case", "lookup-order-status", "lookup_order_status"},
		{"tool_style", "a model writing a tool name in kebab-case", "search-docs", "search_docs"},
		{"tool_namespace", "a model prefixing the tool namespace", "functions.send_email", "send_email"},
		{"tool_namespace", "a model prefixing the tool namespace", "tools:create_ticket", "create_ticket"},
		{"tool_typo", "a model misspelling a tool name by a letter", "get_wether", "get_weather"},
		{"tool_typo", "a model misspelling a tool name by a letter", "serch_docs", "search_docs"},
		{"tool_typo", "a model misspelling a tool name by a letter", "send_emial", "send_email"},
		{"tool_typo", "a model misspelling a tool name by two letters", "lookup_ordr_stats", "lookup_order_status"},
		{"tool_typo", "a model misspelling a tool name by two letters", "create_tiket", "create_ticket"},
		{"tool_unknown", "a model inventing a tool", "delete_account", ""},
		{"tool_unknown", "a model inventing a tool", "browse", ""},
		{"tool_ambiguous", "a name as near to two tools", "get_", ""},
	} {
		out = append(out, entry{Kind: tc.kind, Source: tc.source, Output: tc.name, Tools: tools, Tool: tc.want})
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile("testdata/corpus.json", append(b, '\n'), 0o644); err != nil {
		panic(err)
	}
	fmt.Println(len(out), "entries")
}
