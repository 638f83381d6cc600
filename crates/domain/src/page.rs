//! Keyset pagination: every listing is ordered by a key that is unique per item (a number such
//! as a time or a position, then an id), and a page starts after the key of the last item of
//! the page before. Items inserted while a caller pages never shift the pages it has not read
//! yet (which `OFFSET` would do), and a page costs the same at the millionth item as at the
//! first.
//!
//! A cursor is opaque to callers: the base64url of `1:<number>:<id>`. Any text that does not
//! decode to that is refused, so a caller learns at once that a cursor was damaged.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

/// Where a page starts: after the item with this key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cursor {
    /// The first part of the sort key (a time in milliseconds, a position, ...).
    pub number: i64,
    /// The second part: the item's id, which makes the key unique.
    pub id: String,
}

/// A cursor that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Input should be a cursor from a previous page of this listing")]
pub struct BadCursor;

impl Cursor {
    pub fn new(number: i64, id: impl Into<String>) -> Self {
        Self { number, id: id.into() }
    }

    /// The opaque text a caller passes back as `cursor`.
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("1:{}:{}", self.number, self.id))
    }

    pub fn decode(text: &str) -> Result<Self, BadCursor> {
        if text.is_empty() || text.len() > 1024 {
            return Err(BadCursor);
        }
        let raw = URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).map_err(|_| BadCursor)?;
        let raw = String::from_utf8(raw).map_err(|_| BadCursor)?;
        let rest = raw.strip_prefix("1:").ok_or(BadCursor)?;
        let (number, id) = rest.split_once(':').ok_or(BadCursor)?;
        let number = number.parse::<i64>().map_err(|_| BadCursor)?;
        Ok(Self { number, id: id.to_owned() })
    }
}

/// What a caller asks of a listing: at most `limit` items, after `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    /// At least 1.
    pub limit: usize,
    pub after: Option<Cursor>,
}

impl PageRequest {
    /// The first page of `limit` items (at least 1).
    pub fn first(limit: usize) -> Self {
        Self { limit: limit.max(1), after: None }
    }

    /// How many rows a store reads: one more than the page, to know whether another follows.
    pub fn fetch(&self) -> usize {
        self.limit.max(1) + 1
    }
}

/// One page of a listing, and where the next one starts (`None` on the last page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<Cursor>,
}

impl<T> Page<T> {
    /// The page from rows read with [`PageRequest::fetch`], in listing order: the row past the
    /// limit only tells that a next page exists, and the next page starts after the last item
    /// kept.
    pub fn from_rows(mut rows: Vec<T>, request: &PageRequest, key: impl Fn(&T) -> Cursor) -> Self {
        let limit = request.limit.max(1);
        if rows.len() <= limit {
            return Self { items: rows, next: None };
        }
        rows.truncate(limit);
        let next = rows.last().map(key);
        Self { items: rows, next }
    }

    /// Keeps the first `n` items (at least one, so that paging always moves on); when that
    /// drops items, the next page starts after the last item kept.
    pub fn shorten(mut self, n: usize, key: impl Fn(&T) -> Cursor) -> Self {
        let n = n.max(1);
        if self.items.len() > n {
            self.items.truncate(n);
            self.next = self.items.last().map(key);
        }
        self
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page { items: self.items.into_iter().map(f).collect(), next: self.next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_cursor_survives_its_text() {
        let c = Cursor::new(1_764_000_000_123, "sess:é/ü?&=x");
        let text = c.encode();
        assert!(text.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_'), "{text}");
        assert_eq!(Cursor::decode(&text), Ok(c));
    }

    #[test]
    fn damaged_cursors_are_refused() {
        for bad in ["", "!!!", "MTox", "bm9wZQ", &URL_SAFE_NO_PAD.encode("2:1:x"), &URL_SAFE_NO_PAD.encode("1:x:y")] {
            assert_eq!(Cursor::decode(bad), Err(BadCursor), "{bad:?}");
        }
        assert_eq!(Cursor::decode(&"A".repeat(2000)), Err(BadCursor));
    }

    #[test]
    fn a_page_knows_whether_another_follows() {
        let req = PageRequest::first(2);
        assert_eq!(req.fetch(), 3);
        let key = |n: &i64| Cursor::new(*n, n.to_string());
        let last = Page::from_rows(vec![5, 4], &req, key);
        assert_eq!((last.items, last.next), (vec![5, 4], None));
        let more = Page::from_rows(vec![5, 4, 3], &req, key);
        assert_eq!((more.items, more.next), (vec![5, 4], Some(Cursor::new(4, "4"))));
    }

    #[test]
    fn shortening_a_page_moves_its_cursor_back() {
        let key = |n: &i64| Cursor::new(*n, n.to_string());
        let page = Page { items: vec![9, 8, 7], next: None }.shorten(2, key);
        assert_eq!((page.items, page.next), (vec![9, 8], Some(Cursor::new(8, "8"))));
        let page = Page { items: vec![9, 8], next: None }.shorten(0, key);
        assert_eq!(page.items, vec![9], "a page keeps at least one item");
    }

    proptest! {
        #[test]
        fn any_cursor_round_trips(number in any::<i64>(), id in ".{0,60}") {
            let c = Cursor::new(number, id);
            prop_assert_eq!(Cursor::decode(&c.encode()), Ok(c));
        }

        #[test]
        fn decoding_any_text_never_panics(text in ".{0,80}") {
            let _ = Cursor::decode(&text);
        }
    }
}
