package repair

import (
	"encoding/json"
	"strings"
)

// JSON returns s as valid JSON, fixing what models get wrong: the text
// around it (a code fence, prose before and after), trailing and missing
// commas, single-quoted strings, unquoted keys, Python's True, False and
// None, comments, a tail cut off mid-answer (the open string closed, a
// dangling key dropped, the open objects and arrays closed), and an array
// or object sent as a string. It reports false when s holds no object or
// array it can fix, when the fix would be empty, or when it would be an
// empty object or array that s was not. Valid JSON comes back as it is,
// but for such strings.
func JSON(s string) (string, bool) {
	fixed := strings.TrimSpace(s)
	if !json.Valid([]byte(fixed)) {
		body, ok := extract(s)
		if !ok {
			return "", false
		}
		if fixed, ok = rebuild(tokenize(body)); !ok || !json.Valid([]byte(fixed)) {
			return "", false
		}
	}
	fixed = unstring(fixed)
	if empty := fixed == "{}" || fixed == "[]"; empty && !json.Valid([]byte(strings.TrimSpace(s))) {
		return "", false // a truncation or a fence around nothing is not an empty answer
	}
	return fixed, true
}

// extract returns the part of s that holds the answer: the inside of its
// first code fence, if any, from its first '{' or '['.
func extract(s string) (string, bool) {
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{[") {
			rest = rest[nl+1:] // the fence's language tag
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			rest = rest[:j]
		}
		s = rest
	}
	i := strings.IndexAny(s, "{[")
	if i < 0 {
		return "", false
	}
	return s[i:], true
}

// unstring replaces, in valid JSON, each string that holds a JSON array or
// object with that array or object: a model that sent ["a", "b"] as
// "[\"a\", \"b\"]". Anything else is left as it is.
func unstring(s string) string {
	v, err := decode(s)
	if err != nil {
		return s
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			t := strings.TrimSpace(x)
			if len(t) >= 2 && (t[0] == '[' && t[len(t)-1] == ']' || t[0] == '{' && t[len(t)-1] == '}') {
				if inner, err := decode(t); err == nil {
					changed = true
					return walk(inner)
				}
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}

// decode parses s, keeping its numbers as they are written.
func decode(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
