//! JSON text to a value: [`parse`].

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::float::to_f64;
use super::write::push_u64;
use super::{Map, Number, Value};

/// Containers open at once that make the input an error (serde_json's
/// recursion limit of 128: at most 127 nested arrays/objects parse).
pub const NESTING_LIMIT: usize = 128;

/// Why a text is not JSON, and where (1-based line; column in bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub what: &'static str,
    pub line: usize,
    pub column: usize,
}

impl JsonError {
    /// `"{what} at line {line} column {column}"`, serde_json's error text
    /// (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        let mut text = String::from(self.what);
        text.push_str(" at line ");
        push_u64(&mut text, self.line as u64);
        text.push_str(" column ");
        push_u64(&mut text, self.column as u64);
        text
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

// serde_json's messages, word for word.
const EOF_LIST: &str = "EOF while parsing a list";
const EOF_OBJECT: &str = "EOF while parsing an object";
const EOF_STRING: &str = "EOF while parsing a string";
const EOF_VALUE: &str = "EOF while parsing a value";
const EXPECTED_COLON: &str = "expected `:`";
const EXPECTED_LIST_COMMA_OR_END: &str = "expected `,` or `]`";
const EXPECTED_OBJECT_COMMA_OR_END: &str = "expected `,` or `}`";
const EXPECTED_IDENT: &str = "expected ident";
const EXPECTED_VALUE: &str = "expected value";
const INVALID_ESCAPE: &str = "invalid escape";
const INVALID_NUMBER: &str = "invalid number";
const NUMBER_OUT_OF_RANGE: &str = "number out of range";
const CONTROL_CHARACTER: &str = "control character (\\u0000-\\u001F) found while parsing a string";
const KEY_MUST_BE_A_STRING: &str = "key must be a string";
const RECURSION_LIMIT: &str = "recursion limit exceeded";
const TRAILING_COMMA: &str = "trailing comma";
const TRAILING_CHARACTERS: &str = "trailing characters";

/// An array or object being filled: the object's entry whose value is
/// being parsed has its key here. An object's entries are collected as they
/// come, repeated keys and all, and made a [`Map`] when it closes (in
/// O(n log n): no lookup per key).
enum Open {
    Array(Vec<Value>),
    Object(Vec<(String, Value)>, String),
}

/// Parses one JSON text.
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let mut p = Parser {
        text,
        at: 0,
        stop: ("", 0),
    };
    value(&mut p).map_err(|Stop| p.error_at(p.stop.0, p.stop.1))
}

/// Parsing stopped at an error, which the parser holds (`Parser::stop`):
/// a `Result` with this error is a word, so `?` copies no error around.
struct Stop;

/// The value that makes up the whole text.
fn value(p: &mut Parser) -> Result<Value, Stop> {
    let mut open: Vec<Open> = Vec::new();
    'value: loop {
        let Some(byte) = p.skip_whitespace() else {
            return Err(p.peek_error(EOF_VALUE));
        };
        let mut value = match byte {
            b'[' | b'{' => {
                if open.len() + 1 >= NESTING_LIMIT {
                    return Err(p.peek_error(RECURSION_LIMIT));
                }
                p.at += 1;
                let next = p.skip_whitespace();
                if byte == b'[' {
                    match next {
                        Some(b']') => {
                            p.at += 1;
                            Value::Array(Vec::new())
                        }
                        Some(_) => {
                            open.push(Open::Array(Vec::new()));
                            continue 'value;
                        }
                        None => return Err(p.peek_error(EOF_LIST)),
                    }
                } else {
                    match next {
                        Some(b'}') => {
                            p.at += 1;
                            Value::Object(Map::new())
                        }
                        Some(b'"') => {
                            let key = p.key()?;
                            open.push(Open::Object(Vec::new(), key));
                            continue 'value;
                        }
                        Some(_) => return Err(p.peek_error(KEY_MUST_BE_A_STRING)),
                        None => return Err(p.peek_error(EOF_OBJECT)),
                    }
                }
            }
            b'"' => {
                p.at += 1;
                Value::String(p.string()?)
            }
            b'n' => p.ident("null", Value::Null)?,
            b't' => p.ident("true", Value::Bool(true))?,
            b'f' => p.ident("false", Value::Bool(false))?,
            b'-' | b'0'..=b'9' => p.number()?,
            _ => return Err(p.peek_error(EXPECTED_VALUE)),
        };
        // `value` is complete: hand it to the innermost open container,
        // closing as many as end here.
        loop {
            let next = p.skip_whitespace();
            let Some(container) = open.last_mut() else {
                return match next {
                    Some(_) => Err(p.peek_error(TRAILING_CHARACTERS)),
                    None => Ok(value),
                };
            };
            let (close, eof, comma_or_end) = match container {
                Open::Array(items) => {
                    items.push(value);
                    (b']', EOF_LIST, EXPECTED_LIST_COMMA_OR_END)
                }
                Open::Object(entries, key) => {
                    entries.push((core::mem::take(key), value));
                    (b'}', EOF_OBJECT, EXPECTED_OBJECT_COMMA_OR_END)
                }
            };
            match next {
                Some(b',') => {
                    p.at += 1;
                    let next = p.skip_whitespace();
                    if next == Some(close) {
                        return Err(p.peek_error(TRAILING_COMMA));
                    }
                    match container {
                        Open::Array(_) if next.is_some() => continue 'value,
                        Open::Object(_, key) if next == Some(b'"') => {
                            *key = p.key()?;
                            continue 'value;
                        }
                        Open::Object(..) if next.is_some() => {
                            return Err(p.peek_error(KEY_MUST_BE_A_STRING))
                        }
                        _ => return Err(p.peek_error(EOF_VALUE)),
                    }
                }
                Some(byte) if byte == close => {
                    p.at += 1;
                    value = match open.pop() {
                        Some(Open::Array(items)) => Value::Array(items),
                        Some(Open::Object(entries, _)) => Value::Object(Map::from_entries(entries)),
                        None => Value::Null,
                    };
                }
                Some(_) => return Err(p.peek_error(comma_or_end)),
                None => return Err(p.peek_error(eof)),
            }
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    /// Index of the next byte.
    at: usize,
    /// Why and where (a byte index) parsing stopped, once it has.
    stop: (&'static str, usize),
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    /// The first byte that is not JSON whitespace, not consumed.
    fn skip_whitespace(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
        self.peek()
    }

    /// An error about the byte last consumed (serde_json's `error`).
    #[cold]
    fn error(&mut self, what: &'static str) -> Stop {
        self.stop = (what, self.at);
        Stop
    }

    /// An error about the byte not yet consumed (serde_json's `peek_error`).
    #[cold]
    fn peek_error(&mut self, what: &'static str) -> Stop {
        self.stop = (what, (self.at + 1).min(self.text.len()));
        Stop
    }

    #[cold]
    fn error_at(&self, what: &'static str, at: usize) -> JsonError {
        let before = self.text.as_bytes().get(..at).unwrap_or_default();
        let (mut line, mut line_start) = (1, 0);
        for (i, &b) in before.iter().enumerate() {
            if b == b'\n' {
                line += 1;
                line_start = i + 1;
            }
        }
        JsonError {
            what,
            line,
            column: at - line_start,
        }
    }

    /// `null`, `true` or `false`, whose first byte is next.
    fn ident(&mut self, word: &str, value: Value) -> Result<Value, Stop> {
        self.at += 1;
        for &expected in word.as_bytes().get(1..).unwrap_or_default() {
            match self.next() {
                Some(byte) if byte == expected => {}
                Some(_) => return Err(self.error(EXPECTED_IDENT)),
                None => return Err(self.error(EOF_VALUE)),
            }
        }
        Ok(value)
    }

    /// An object key (its opening quote is next), then the colon after it.
    fn key(&mut self) -> Result<String, Stop> {
        self.at += 1;
        let key = self.string()?;
        match self.skip_whitespace() {
            Some(b':') => {
                self.at += 1;
                Ok(key)
            }
            Some(_) => Err(self.peek_error(EXPECTED_COLON)),
            None => Err(self.peek_error(EOF_OBJECT)),
        }
    }

    /// The rest of a string whose opening quote was consumed.
    fn string(&mut self) -> Result<String, Stop> {
        let mut out = String::new();
        let mut start = self.at;
        loop {
            let Some(byte) = self.next() else {
                return Err(self.error(EOF_STRING));
            };
            match byte {
                b'"' | b'\\' => {
                    // `start..at - 1` ends before an ASCII byte: a char boundary.
                    out.push_str(self.text.get(start..self.at - 1).unwrap_or_default());
                    if byte == b'"' {
                        return Ok(out);
                    }
                    self.escape(&mut out)?;
                    start = self.at;
                }
                0..=0x1f => return Err(self.error(CONTROL_CHARACTER)),
                _ => {}
            }
        }
    }

    /// One escape after its backslash.
    fn escape(&mut self, out: &mut String) -> Result<(), Stop> {
        let Some(byte) = self.next() else {
            return Err(self.error(EOF_STRING));
        };
        out.push(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                if (0xD800..0xDC00).contains(&unit) {
                    // A high surrogate pairs only with a `\u` low one right after.
                    let low = self
                        .text
                        .as_bytes()
                        .get(self.at..self.at + 6)
                        .filter(|next| next.starts_with(b"\\u"))
                        .and_then(|next| next.get(2..))
                        .and_then(hex_value)
                        .filter(|low| (0xDC00..0xE000).contains(low));
                    match low {
                        Some(low) => {
                            self.at += 6;
                            char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                                .unwrap_or('\u{fffd}')
                        }
                        None => '\u{fffd}',
                    }
                } else {
                    // A lone low surrogate is not a char either: U+FFFD.
                    char::from_u32(unit).unwrap_or('\u{fffd}')
                }
            }
            _ => return Err(self.error(INVALID_ESCAPE)),
        });
        Ok(())
    }

    /// The four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Result<u32, Stop> {
        let Some(digits) = self.text.as_bytes().get(self.at..self.at + 4) else {
            self.at = self.text.len();
            return Err(self.error(EOF_STRING));
        };
        self.at += 4;
        hex_value(digits).ok_or_else(|| self.error(INVALID_ESCAPE))
    }

    /// A number whose first byte (`-` or a digit) is next.
    fn number(&mut self) -> Result<Value, Stop> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let int_start = self.at;
        // The integer part, kept as a u64 while it fits.
        let mut integer = Some(0u64);
        match self.next() {
            Some(b'0') => {
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    return Err(self.peek_error(INVALID_NUMBER));
                }
            }
            Some(first @ b'1'..=b'9') => {
                integer = Some(u64::from(first - b'0'));
                while let Some(digit) = self.digit() {
                    // Not `checked_mul`: its overflow test is a 128-bit
                    // multiplication in the wasm (`__multi3`).
                    integer = integer
                        .filter(|&n| n <= u64::MAX / 10)
                        .and_then(|n| (n * 10).checked_add(u64::from(digit)));
                }
            }
            Some(_) => return Err(self.error(INVALID_NUMBER)),
            None => return Err(self.error(EOF_VALUE)),
        }
        let int_end = self.at;
        let mut zero = integer == Some(0);
        let mut float = integer.is_none();
        if self.peek() == Some(b'.') {
            self.at += 1;
            let frac_start = self.at;
            float = true;
            while let Some(digit) = self.digit() {
                zero &= digit == 0;
            }
            if self.at == frac_start {
                let what = if self.peek().is_some() {
                    INVALID_NUMBER
                } else {
                    EOF_VALUE
                };
                return Err(self.peek_error(what));
            }
        }
        let frac_end = self.at;
        // The exponent, or None when it is too long to matter (the number is 0).
        let mut exponent = Some(0i32);
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            float = true;
            let positive = match self.peek() {
                Some(b'+') => {
                    self.at += 1;
                    true
                }
                Some(b'-') => {
                    self.at += 1;
                    false
                }
                _ => true,
            };
            // serde_json counts the exponent in an i32 and, past it, calls a
            // non-zero number with a positive exponent out of range right there.
            let mut e = match self.next() {
                Some(digit @ b'0'..=b'9') => Some(i32::from(digit - b'0')),
                Some(_) => return Err(self.error(INVALID_NUMBER)),
                None => return Err(self.error(EOF_VALUE)),
            };
            while let Some(digit) = self.digit() {
                e = e
                    .and_then(|e| e.checked_mul(10))
                    .and_then(|e| e.checked_add(i32::from(digit)));
                if e.is_none() && positive && !zero {
                    return Err(self.error(NUMBER_OUT_OF_RANGE));
                }
            }
            exponent = e.map(|e| if positive { e } else { -e });
        }
        let magnitude = match integer {
            Some(n) if !float && !negative => return Ok(Value::Number(Number::from(n))),
            Some(n) if !float && n != 0 && n <= i64::MIN.unsigned_abs() => {
                return Ok(Value::Number(Number::from(0i64.wrapping_sub_unsigned(n))));
            }
            // `-0`, or below i64::MIN: a float (rounded to nearest, ties even).
            #[allow(clippy::cast_precision_loss)]
            Some(n) if !float => n as f64,
            _ => {
                let bytes = self.text.as_bytes();
                let digits = |range: core::ops::Range<usize>| bytes.get(range).unwrap_or_default();
                let magnitude = match exponent {
                    // The digits with the point between them, if any.
                    Some(e) => to_f64(digits(int_start..frac_end), int_end - int_start, e),
                    None => 0.0,
                };
                if magnitude.is_infinite() {
                    return Err(self.error(NUMBER_OUT_OF_RANGE));
                }
                magnitude
            }
        };
        let value = if negative { -magnitude } else { magnitude };
        let text = self.text.get(start..self.at).unwrap_or_default();
        Ok(Value::Number(Number::float(value, text)))
    }

    /// The next byte's value when it is a decimal digit (consumed).
    fn digit(&mut self) -> Option<u8> {
        let digit = self.peek()?.wrapping_sub(b'0');
        if digit < 10 {
            self.at += 1;
            Some(digit)
        } else {
            None
        }
    }
}

/// Four hex digits (either case) as a number.
fn hex_value(digits: &[u8]) -> Option<u32> {
    if digits.len() != 4 {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some(n * 16 + digit)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn error_message_is_serde_json_text() {
        for (text, line, column) in [
            ("", 1, 0),
            ("[1,]", 1, 4),
            ("{\n\n  \"a\" 1}", 3, 7),
            ("\"\\u12", 1, 5),
        ] {
            let error = parse(text).err().unwrap_or_else(|| panic!("{text}"));
            assert_eq!((error.line, error.column), (line, column), "{text}");
            let want = format!("{} at line {} column {}", error.what, line, column);
            assert_eq!(error.message(), want);
            assert_eq!(format!("{error}"), want);
        }
        let big = JsonError {
            what: EOF_VALUE,
            line: usize::MAX,
            column: 1_000_000_007,
        };
        assert_eq!(
            big.message(),
            format!("{EOF_VALUE} at line {} column 1000000007", usize::MAX)
        );
    }
}
