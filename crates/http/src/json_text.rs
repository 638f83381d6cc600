//! A JSON answer with one very large string field (a document's HTML), escaped piece by
//! piece as it is sent instead of serialized whole beside the string: a 50 MB document is
//! then held once while it is answered, not twice. The body has a known length, so the
//! answer carries `Content-Length` as `HttpResponse::json` would.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, MessageBody};
use actix_web::web::Bytes;
use serde::Serialize;

/// Bytes of the string escaped at a time.
const PIECE: usize = 64 * 1024;

/// `value` as JSON, with its string field `field` holding `text`.
#[derive(Debug)]
pub struct JsonWithText {
    head: Bytes,
    text: String,
    /// Bytes of `text` sent so far.
    sent: usize,
    tail: Bytes,
    size: u64,
}

/// The end of the piece of `text` starting at `start`: at most `PIECE` bytes, on a
/// character boundary.
fn piece_end(text: &str, start: usize) -> usize {
    let mut end = (start + PIECE).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// A JSON string's content: `s` escaped, without the quotes.
fn escaped(s: &str) -> Bytes {
    // Serializing a string into a Vec cannot fail.
    let quoted = serde_json::to_vec(s).unwrap_or_else(|_| b"\"\"".to_vec());
    let end = quoted.len() - 1;
    Bytes::from(quoted).slice(1..end)
}

/// The length of `s` escaped as serde_json escapes it (without the quotes).
fn escaped_len(s: &str) -> usize {
    s.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\x08' | b'\x0c' | b'\n' | b'\r' | b'\t' => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

impl JsonWithText {
    /// `value` must serialize as an object whose first field named `field` is the empty
    /// string, which `text` replaces.
    pub fn new<T: Serialize>(value: &T, field: &str, text: String) -> Result<Self, String> {
        let json = serde_json::to_vec(value).map_err(|e| e.to_string())?;
        let key = format!("\"{field}\":\"\"");
        let at = json
            .windows(key.len())
            .position(|w| w == key.as_bytes())
            .ok_or_else(|| format!("no empty `{field}` in the answer"))?;
        let json = Bytes::from(json);
        // The head ends with the opening quote of the value, the tail starts with its closing one.
        let (head, tail) = (json.slice(..at + key.len() - 1), json.slice(at + key.len() - 1..));
        let size = (head.len() + escaped_len(&text) + tail.len()) as u64;
        Ok(Self { head, text, sent: 0, tail, size })
    }
}

impl MessageBody for JsonWithText {
    type Error = Infallible;

    fn size(&self) -> BodySize {
        BodySize::Sized(self.size)
    }

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.get_mut();
        if !this.head.is_empty() {
            return Poll::Ready(Some(Ok(std::mem::take(&mut this.head))));
        }
        if this.sent < this.text.len() {
            let end = piece_end(&this.text, this.sent);
            let piece = escaped(&this.text[this.sent..end]);
            this.sent = end;
            if this.sent == this.text.len() {
                // Sent: the text need not wait for the client to read the tail.
                this.text = String::new();
                this.sent = 0;
            }
            return Poll::Ready(Some(Ok(piece)));
        }
        if !this.tail.is_empty() {
            return Poll::Ready(Some(Ok(std::mem::take(&mut this.tail))));
        }
        Poll::Ready(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn collect(body: JsonWithText) -> Vec<u8> {
        let size = body.size();
        let bytes = actix_web::body::to_bytes(body).await.expect("infallible");
        assert_eq!(size, BodySize::Sized(bytes.len() as u64));
        bytes.to_vec()
    }

    #[actix_web::test]
    async fn the_answer_is_the_json_of_the_whole_value() {
        let text: String =
            "ab\"c\\d\n\u{1}é👩<p data-chunk-id=\"x\">\u{7f}\t".chars().cycle().take(3 * PIECE + 17).collect();
        let value = json!({"session_id": "s", "html": "", "n": 3, "w": ["html"]});
        let bytes = collect(JsonWithText::new(&value, "html", text.clone()).unwrap()).await;
        let expected = json!({"session_id": "s", "html": text, "n": 3, "w": ["html"]});
        assert_eq!(bytes, serde_json::to_vec(&expected).unwrap());
        let empty = collect(JsonWithText::new(&value, "html", String::new()).unwrap()).await;
        assert_eq!(empty, serde_json::to_vec(&value).unwrap());
        assert!(JsonWithText::new(&json!({"html": "x"}), "html", String::new()).is_err());
    }
}
