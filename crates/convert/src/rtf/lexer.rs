//! The RTF tokenizer: groups, control words with their parameter, control symbols, `\'hh`
//! bytes and runs of plain bytes. Line ends outside control words are dropped (RTF ignores
//! them); `\` before a line end is a paragraph break.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Token<'a> {
    GroupStart,
    GroupEnd,
    /// A control word and its parameter.
    Word(&'a [u8], Option<i32>),
    /// A control symbol: `\` and one character that is not a letter.
    Symbol(u8),
    /// `\'hh`.
    Hex(u8),
    /// Plain bytes (no `\`, braces or line ends).
    Text(&'a [u8]),
}

pub(super) struct Lexer<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Lexer { bytes, at: 0 }
    }

    /// Takes `n` bytes of binary data (`\binN`; fewer at the end of the file).
    pub(super) fn take(&mut self, n: usize) -> &'a [u8] {
        let start = self.at;
        self.at = self.at.saturating_add(n).min(self.bytes.len());
        &self.bytes[start..self.at]
    }

    pub(super) fn next_token(&mut self) -> Option<Token<'a>> {
        let bytes = self.bytes;
        loop {
            let c = *bytes.get(self.at)?;
            match c {
                b'{' => {
                    self.at += 1;
                    return Some(Token::GroupStart);
                }
                b'}' => {
                    self.at += 1;
                    return Some(Token::GroupEnd);
                }
                b'\r' | b'\n' => self.at += 1,
                b'\\' => {
                    let Some(&next) = bytes.get(self.at + 1) else {
                        self.at += 1;
                        return None;
                    };
                    if next.is_ascii_alphabetic() {
                        let start = self.at + 1;
                        let mut end = start;
                        while end < bytes.len() && bytes[end].is_ascii_alphabetic() && end - start < 32 {
                            end += 1;
                        }
                        let name = &bytes[start..end];
                        let mut param = None;
                        let negative =
                            bytes.get(end) == Some(&b'-') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
                        let digits_start = if negative { end + 1 } else { end };
                        let mut digits_end = digits_start;
                        while digits_end < bytes.len()
                            && bytes[digits_end].is_ascii_digit()
                            && digits_end - digits_start < 10
                        {
                            digits_end += 1;
                        }
                        if digits_end > digits_start {
                            let value = bytes[digits_start..digits_end]
                                .iter()
                                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
                            let value = if negative { -value } else { value };
                            param = Some(value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32);
                            end = digits_end;
                        }
                        if bytes.get(end) == Some(&b' ') {
                            end += 1;
                        }
                        self.at = end;
                        return Some(Token::Word(name, param));
                    }
                    if next == b'\'' {
                        let hex = |i: usize| bytes.get(i).and_then(|b| (*b as char).to_digit(16));
                        if let (Some(hi), Some(lo)) = (hex(self.at + 2), hex(self.at + 3)) {
                            self.at += 4;
                            return Some(Token::Hex((hi * 16 + lo) as u8));
                        }
                        self.at += 2;
                        continue;
                    }
                    self.at += 2;
                    if next == b'\r' || next == b'\n' {
                        return Some(Token::Word(b"par", None));
                    }
                    return Some(Token::Symbol(next));
                }
                _ => {
                    let start = self.at;
                    while self.at < bytes.len() && !matches!(bytes[self.at], b'\\' | b'{' | b'}' | b'\r' | b'\n') {
                        self.at += 1;
                    }
                    return Some(Token::Text(&bytes[start..self.at]));
                }
            }
        }
    }
}
