package repair

import (
	"strconv"
	"strings"
)

// A token of a JSON-like text. Its kind is its character for punctuation,
// or one of the kinds below; text is valid JSON for strings, numbers and
// literals, and the name for a bare identifier.
type token struct {
	kind byte
	text string
	cut  bool // a string the text ended in
}

const (
	kString = 's'
	kNumber = 'n'
	kLit    = 'l' // true, false, null
	kIdent  = 'i' // a bare word: an unquoted key, or nothing JSON knows
)

// literals maps the bare words models write for JSON's literals.
var literals = map[string]string{
	"true": "true", "True": "true", "TRUE": "true",
	"false": "false", "False": "false", "FALSE": "false",
	"null": "null", "None": "null", "NULL": "null", "nil": "null", "undefined": "null",
}

// tokenize reads s as JSON as models write it: it skips comments, reads
// single-quoted strings and bare words, and closes a string the text ends
// in. Characters that start no token are kept as one-character tokens of
// their own, which rebuild refuses.
func tokenize(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "//"):
			i = skipTo(s, i, "\n")
		case strings.HasPrefix(s[i:], "/*"):
			i = skipTo(s, i, "*/")
		case strings.ContainsRune("{}[]:,", rune(c)):
			toks = append(toks, token{kind: c})
			i++
		case c == '"' || c == '\'':
			text, n := readString(s[i:], c)
			toks = append(toks, token{kind: kString, text: text, cut: i+n == len(s) && !closed(s[i:i+n], c)})
			i += n
		case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
			text, n := readNumber(s[i:])
			if n == 0 {
				toks = append(toks, token{kind: c})
				n = 1
			} else {
				toks = append(toks, token{kind: kNumber, text: text})
			}
			i += n
		case isWordStart(c):
			n := 1
			for n < len(s[i:]) && isWordPart(s[i+n]) {
				n++
			}
			toks = append(toks, word(s[i:i+n], i+n == len(s)))
			i += n
		default:
			toks = append(toks, token{kind: c})
			i++
		}
	}
	return toks
}

// closed reports whether the string quoted by q that s holds whole, or
// up to the end of the text, has its closing quote.
func closed(s string, q byte) bool {
	if len(s) < 2 || s[len(s)-1] != q {
		return false
	}
	escapes := 0
	for i := len(s) - 2; i > 0 && s[i] == '\\'; i-- {
		escapes++
	}
	return escapes%2 == 0
}

// skipTo returns the index just past the first end after i, or len(s).
func skipTo(s string, i int, end string) int {
	if j := strings.Index(s[i+2:], end); j >= 0 {
		return i + 2 + j + len(end)
	}
	return len(s)
}

// readString reads the string quoted by q at the start of s, and returns
// it as a JSON string and how many bytes it took; a string the text ends
// in is closed.
func readString(s string, q byte) (string, int) {
	var b strings.Builder
	b.WriteByte('"')
	i := 1
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			b.WriteByte('"')
			return b.String(), i + 1
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '\'' {
				b.WriteByte('\'') // \' is no JSON escape
			} else {
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		case c == '\\': // the text ends in a lone backslash
		case c == '"': // inside a single-quoted string
			b.WriteString(`\"`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String(), i
}

// readNumber reads a number at the start of s, returns it as JSON (a
// leading + or a trailing point dropped, a leading point given its 0) and
// how many bytes it took, or 0 for none.
func readNumber(s string) (string, int) {
	n := 0
	for n < len(s) && strings.IndexByte("+-.0123456789eE", s[n]) >= 0 {
		n++
	}
	text := strings.TrimPrefix(s[:n], "+")
	text = strings.TrimSuffix(text, ".")
	if strings.HasPrefix(text, ".") {
		text = "0" + text
	} else if strings.HasPrefix(text, "-.") {
		text = "-0" + text[1:]
	}
	if _, err := strconv.ParseFloat(text, 64); err != nil {
		return "", 0
	}
	return text, n
}

// word returns the token of a bare word: a literal, or the start of one
// where the text ends in it, else an identifier.
func word(w string, atEnd bool) token {
	if lit, ok := literals[w]; ok {
		return token{kind: kLit, text: lit}
	}
	if atEnd {
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(lit, w) {
				return token{kind: kLit, text: lit}
			}
		}
	}
	return token{kind: kIdent, text: w}
}

func isWordStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isWordPart(c byte) bool { return isWordStart(c) || c == '-' || (c >= '0' && c <= '9') }

// frame is an object or array being rebuilt: its opening character, what
// comes next in it, and, in an object, where the member being read began.
type frame struct {
	kind        byte
	next        byte // 'k' a key, ':' its colon, 'v' a value, ',' a comma or the end
	memberStart int
}

// rebuild writes the tokens of one object or array as JSON, fixing what it
// can: it drops trailing, leading and doubled commas and adds missing
// ones before a quoted key or an array's element, quotes bare and numeric
// keys, and, where the tokens end before the answer does, drops a
// dangling comma or key and closes what is open. Tokens after the answer
// (prose) are ignored. It reports false for anything else: a bare word as
// a value, a closer that does not match.
func rebuild(toks []token) (string, bool) {
	var b builder
	for i, t := range toks {
		if i > 0 && len(b.stack) == 0 {
			break // the answer is whole: what follows is prose
		}
		if !b.add(t, i == 0) {
			return "", false
		}
	}
	if len(b.out) == 0 {
		return "", false
	}
	for len(b.stack) > 0 { // the text ended before the answer did
		b.out = closeFrame(b.out, b.top())
		b.stack = b.stack[:len(b.stack)-1]
	}
	return strings.Join(b.out, ""), true
}

// builder is rebuild's state: what it wrote, and the objects and arrays
// open.
type builder struct {
	out   []string
	stack []frame
}

func (b *builder) top() *frame {
	if len(b.stack) == 0 {
		return nil
	}
	return &b.stack[len(b.stack)-1]
}

// add writes t, the first token when first, and reports false where it
// cannot go.
func (b *builder) add(t token, first bool) bool {
	top := b.top()
	switch t.kind {
	case '{', '[':
		if !first && !beforeValue(&b.out, top) {
			return false
		}
		if top != nil {
			top.next = ',' // the value has begun: a cut inside it keeps it
		}
		next := byte('v')
		if t.kind == '{' {
			next = 'k'
		}
		b.stack = append(b.stack, frame{kind: t.kind, next: next})
		b.out = append(b.out, string(t.kind))
	case '}', ']':
		if top == nil || top.kind != opener(t.kind) {
			return false
		}
		b.out = closeFrame(b.out, top)
		b.stack = b.stack[:len(b.stack)-1]
	case ':':
		switch {
		case top == nil || top.kind != '{' || top.next == 'k' || top.next == ',':
			return false
		case top.next == ':':
			b.out, top.next = append(b.out, ":"), 'v'
		} // a second colon is dropped
	case ',':
		switch {
		case top == nil || top.next == ':':
			return false
		case top.next == ',':
			b.out = append(b.out, ",")
			top.next = map[byte]byte{'{': 'k', '[': 'v'}[top.kind]
		} // a leading or doubled comma is dropped
	case kString, kNumber, kLit, kIdent:
		return b.scalar(t, top)
	default:
		return false
	}
	return true
}

// scalar writes t, a string, number, literal or bare word, into top: as
// a key where one is due, else as a value.
func (b *builder) scalar(t token, top *frame) bool {
	switch {
	case top == nil:
		return false
	case t.cut && t.text == `""`:
		return true // cut before its first letter: no value, and so no member
	case top.kind == '{' && (top.next == 'k' || top.next == ','):
		if top.next == ',' {
			if t.kind != kString {
				return false // a bare word after a value: prose inside the answer, not a key
			}
			b.out = append(b.out, ",") // a missing comma between members
		}
		key := t.text
		if t.kind != kString {
			key = strconv.Quote(t.text)
		}
		top.memberStart = len(b.out)
		b.out, top.next = append(b.out, key), ':'
		return true
	case t.kind == kIdent || !beforeValue(&b.out, top):
		return false
	}
	b.out = append(b.out, t.text)
	top.next = ','
	return true
}

// beforeValue readies out for a value in top: a missing comma after a
// value in an array is added. It reports false where no value can go.
func beforeValue(out *[]string, top *frame) bool {
	switch {
	case top == nil:
		return false
	case top.kind == '{' && top.next != 'v':
		// A key with no colon after it: more likely a quote the model
		// did not escape, splitting a string, than a colon it left out.
		return false
	case top.kind == '[' && top.next == ',':
		*out = append(*out, ",") // a missing comma between elements
	}
	return true
}

// closeFrame ends f in out: a trailing comma, or a member cut off before
// its value, is dropped, and f is closed.
func closeFrame(out []string, f *frame) []string {
	if f.kind == '{' && (f.next == ':' || f.next == 'v') {
		out = out[:f.memberStart]
	}
	if n := len(out); n > 0 && out[n-1] == "," {
		out = out[:n-1]
	}
	if f.kind == '{' {
		return append(out, "}")
	}
	return append(out, "]")
}

// opener is the opening character a closer matches.
func opener(closer byte) byte {
	if closer == '}' {
		return '{'
	}
	return '['
}
