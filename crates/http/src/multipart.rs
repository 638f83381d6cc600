//! Multipart form uploads: every field read as a stream under caps, text fields up to a few
//! KB. [`read_form`] keeps the file field in memory up to the upload limit (413 beyond it);
//! [`stream_form`] hands it, chunk by chunk, to a consumer (the blob store) instead, and
//! [`pump`] does the same for a whole raw body.

use actix_multipart::{Field, Multipart};
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{HttpMessage, HttpRequest};
use futures_util::StreamExt;
use serde_json::json;

use crate::error::ApiError;
use crate::middleware::RequestId;
use crate::state::AppState;
use crate::validation::ValidationItem;

/// Longest text field accepted.
const TEXT_FIELD_MAX: usize = 8 * 1024;

/// An uploaded file.
pub struct UploadedFile {
    pub filename: String,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

/// The fields of a multipart form.
#[derive(Default)]
pub struct Form {
    pub file: Option<UploadedFile>,
    pub text: Vec<(String, String)>,
}

impl Form {
    pub fn text(&self, name: &str) -> Option<&str> {
        self.text.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The 413 JSON of a body over `max` bytes (`seen` of it were counted).
/// The body's size as its `Content-Length` declares it, when it does.
pub fn content_length(req: &HttpRequest) -> Option<u64> {
    req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok())
}

pub fn too_large(req: &HttpRequest, state: &AppState, seen: u64, max: u64) -> ApiError {
    ApiError::PayloadTooLarge {
        request_bytes: seen,
        max_bytes: max,
        contact_email: state.config.contact_email.clone(),
        support_event_id: req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default(),
    }
}

async fn read_field(field: &mut Field, cap: u64, buf: &mut Vec<u8>) -> Result<Option<u64>, ApiError> {
    while let Some(chunk) = field.next().await {
        let chunk = chunk.map_err(|e| malformed(&e.to_string()))?;
        if (buf.len() + chunk.len()) as u64 > cap {
            return Ok(Some(buf.len() as u64 + chunk.len() as u64));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(None)
}

/// The file name at the end of a Windows path sent unescaped as a quoted `filename`
/// (`filename="C:\Users\me\report.txt"`, as old browsers and some clients send it): the
/// header parser reads its backslashes as escapes and would make `C:Usersmereport.txt`.
/// `None` for anything else, which the parser reads as usual (a client that escapes its
/// backslashes sends `\\`, and a path of that shape is then not recognised here).
fn windows_path_file_name(headers: &header::HeaderMap) -> Option<String> {
    let raw = headers.get(header::CONTENT_DISPOSITION)?.as_bytes();
    let raw = String::from_utf8_lossy(raw);
    let lower = raw.to_ascii_lowercase();
    let start = lower.match_indices("filename=\"").map(|(i, _)| i).find(|&i| {
        // `filename=`, not the end of `xfilename=` or the `filename*=` form.
        i == 0 || matches!(lower.as_bytes()[i - 1], b';' | b' ' | b'\t')
    })? + "filename=\"".len();
    let value = &raw[start..];
    let value = &value[..value.find('"')?];
    let bytes = value.as_bytes();
    let drive = bytes.len() > 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'\\';
    let unc = value.starts_with("\\\\") && !value.starts_with("\\\\\\");
    if !(drive || unc) || (drive && value.contains("\\\\")) {
        return None;
    }
    let name = value.rsplit('\\').next()?;
    (!name.is_empty()).then(|| name.to_owned())
}

/// A part's file name: the last part of a Windows path sent unescaped, else `filename*`
/// (RFC 5987: percent-encoded UTF-8 or ISO-8859-1; it wins over `filename`, RFC 6266 §4.3),
/// else `filename`. `None` for a part that is not a file.
fn file_name_of(headers: &header::HeaderMap) -> Option<String> {
    if let Some(name) = windows_path_file_name(headers) {
        return Some(name);
    }
    let disposition = header::ContentDisposition::from_raw(headers.get(header::CONTENT_DISPOSITION)?).ok()?;
    if let Some(ext) = disposition.get_filename_ext() {
        return Some(if ext.charset.to_string().eq_ignore_ascii_case("ISO-8859-1") {
            ext.value.iter().map(|&b| char::from(b)).collect()
        } else {
            String::from_utf8_lossy(&ext.value).into_owned()
        });
    }
    disposition.get_filename().map(str::to_owned)
}

/// The checks of a form before its body is read: 415 when it is not multipart, 413 when its
/// declared length is far over the cap. Answers the declared length.
fn form_head(
    req: &HttpRequest,
    state: &AppState,
    file_field: &str,
    max_file_bytes: u64,
) -> Result<Option<u64>, ApiError> {
    let ct = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !ct.to_ascii_lowercase().starts_with("multipart/form-data") {
        return Err(ApiError::UnsupportedMediaType(format!(
            "Unsupported content type '{ct}': this endpoint expects 'multipart/form-data' with a '{file_field}' file field."
        )));
    }
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    // The body may exceed the file by its other fields and boundaries: a few KB.
    let body_cap = max_file_bytes.saturating_add(64 * 1024).min(state.config.max_body_bytes.max(max_file_bytes));
    if let Some(len) = declared.filter(|l| *l > body_cap) {
        return Err(too_large(req, state, len, max_file_bytes));
    }
    Ok(declared)
}

/// The bytes of a field (or a body) as a consumer reads them.
pub type Chunks = futures_util::stream::BoxStream<'static, Result<actix_web::web::Bytes, std::io::Error>>;

/// Reads a `multipart/form-data` body whose file field is `file_field`, capped at
/// `max_file_bytes` (413 JSON beyond it). A body that is not multipart → 415.
pub async fn read_form(
    req: &HttpRequest,
    payload: Payload,
    state: &AppState,
    file_field: &str,
    max_file_bytes: u64,
) -> Result<Form, ApiError> {
    let declared = form_head(req, state, file_field, max_file_bytes)?;
    let mut multipart = Multipart::new(req.headers(), payload);
    let mut form = Form::default();
    while let Some(field) = multipart.next().await {
        let mut field = field.map_err(|e| malformed(&e.to_string()))?;
        let name = field.name().unwrap_or_default().to_owned();
        let filename = file_name_of(field.headers());
        if (name == file_field && form.file.is_some()) || form.text(&name).is_some() {
            return Err(given_twice(&name));
        }
        if name == file_field {
            let content_type = field.content_type().map(|m| m.essence_str().to_owned());
            // Room for the whole file at once (the body's declared length, under the cap):
            // grown by doubling, a 50 MB file would leave its smaller buffers behind in the
            // allocator, adding to the peak of the upload that follows.
            let expected = declared.unwrap_or(0).min(max_file_bytes);
            let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
            if let Some(seen) = read_field(&mut field, max_file_bytes, &mut bytes).await? {
                return Err(too_large(req, state, seen, max_file_bytes));
            }
            form.file = Some(UploadedFile { filename: filename.unwrap_or_default(), content_type, bytes });
        } else {
            let mut bytes = Vec::new();
            if read_field(&mut field, TEXT_FIELD_MAX as u64, &mut bytes).await?.is_some() {
                return Err(ApiError::Validation(vec![ValidationItem::new(
                    "string_too_long",
                    vec![json!("body"), json!(name)],
                    format!("Form field should have at most {TEXT_FIELD_MAX} bytes"),
                    serde_json::Value::Null,
                )]));
            }
            if filename.is_none() {
                let value = String::from_utf8_lossy(&bytes).into_owned();
                form.text.push((name, value));
            }
        }
    }
    Ok(form)
}

/// How a streamed body was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pumped {
    /// Bytes read from the client (also those the consumer did not take).
    pub bytes: u64,
    /// The client's stream broke (a disconnect, a malformed part).
    pub client_error: Option<String>,
}

/// Feeds `source` (a request body or a multipart field, which are not `Send`) to `consume`
/// as a `Send` stream through a channel of a few chunks, both running at once: memory stays
/// bounded by the channel and the consumer. A broken client stream ends the consumer's stream
/// with an error; a consumer that stops early stops the reading.
pub async fn pump<S, E, F, Fut, T>(mut source: S, consume: F) -> (T, Pumped)
where
    S: futures_util::Stream<Item = Result<actix_web::web::Bytes, E>> + Unpin,
    E: std::fmt::Display,
    F: FnOnce(Chunks) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<actix_web::web::Bytes, std::io::Error>>(4);
    let chunks =
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) }).boxed();
    let feed = async move {
        let mut pumped = Pumped::default();
        while let Some(chunk) = source.next().await {
            match chunk {
                Ok(chunk) => {
                    pumped.bytes += chunk.len() as u64;
                    if tx.send(Ok(chunk)).await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let cause = e.to_string();
                    let _ = tx.send(Err(std::io::Error::other(cause.clone()))).await;
                    pumped.client_error = Some(cause);
                    break;
                }
            }
        }
        pumped
    };
    futures_util::future::join(consume(chunks), feed).await
}

/// The file field of a streamed form, as the client named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStart {
    pub filename: String,
    pub content_type: Option<String>,
}

/// A form whose file field went to a consumer.
pub struct StreamedForm<T> {
    /// What the consumer made of the file field (`None` when the form had none).
    pub file: Option<T>,
    pub text: Vec<(String, String)>,
}

impl<T> StreamedForm<T> {
    pub fn text(&self, name: &str) -> Option<&str> {
        self.text.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// A form refused by [`stream_form`], with what the consumer made of its file field when the
/// problem came after it (the caller removes it: a refusal leaves nothing behind).
pub struct FormRefused<T> {
    pub error: ApiError,
    pub file: Option<T>,
}

/// Reads a `multipart/form-data` body whose file field `file_field` is streamed to `consume`
/// (called once, with the field's name and type, before any of its bytes are read), which
/// must itself refuse more than `max_file_bytes` bytes. A body that is not multipart → 415; a
/// declared length far over the cap → 413 before reading; a body that breaks or ends before
/// its closing boundary, or a field given twice → 422. When the consumer fails, the rest of
/// the form is not read.
pub async fn stream_form<T, F, Fut>(
    req: &HttpRequest,
    payload: Payload,
    state: &AppState,
    file_field: &str,
    max_file_bytes: u64,
    consume: F,
) -> Result<StreamedForm<T>, FormRefused<T>>
where
    F: FnOnce(FileStart, Chunks) -> Fut,
    Fut: std::future::Future<Output = Result<T, ApiError>>,
{
    form_head(req, state, file_field, max_file_bytes).map_err(|error| FormRefused { error, file: None })?;
    let mut multipart = Multipart::new(req.headers(), payload);
    let mut form = StreamedForm { file: None, text: Vec::new() };
    // Every problem after the file field was consumed hands the file back with the error.
    match stream_fields(&mut multipart, &mut form, file_field, consume).await {
        Ok(()) => Ok(form),
        Err(error) => Err(FormRefused { error, file: form.file }),
    }
}

async fn stream_fields<T, F, Fut>(
    multipart: &mut Multipart,
    form: &mut StreamedForm<T>,
    file_field: &str,
    consume: F,
) -> Result<(), ApiError>
where
    F: FnOnce(FileStart, Chunks) -> Fut,
    Fut: std::future::Future<Output = Result<T, ApiError>>,
{
    let mut consume = Some(consume);
    while let Some(field) = multipart.next().await {
        let mut field = field.map_err(|e| malformed(&e.to_string()))?;
        let name = field.name().unwrap_or_default().to_owned();
        let filename = file_name_of(field.headers());
        if (name == file_field && form.file.is_some()) || form.text(&name).is_some() {
            return Err(given_twice(&name));
        }
        if name == file_field {
            let Some(consume) = consume.take() else { continue };
            let start = FileStart {
                filename: filename.unwrap_or_default(),
                content_type: field.content_type().map(|m| m.essence_str().to_owned()),
            };
            let (out, pumped) = pump(&mut field, |chunks| consume(start, chunks)).await;
            match (out, pumped.client_error) {
                (Ok(file), None) => form.file = Some(file),
                (Ok(file), Some(cause)) => {
                    form.file = Some(file);
                    return Err(malformed(&cause));
                }
                // The body broke while the consumer read it: the body's problem is the one to
                // name (the consumer saw an I/O error).
                (Err(_), Some(cause)) => return Err(malformed(&cause)),
                (Err(e), None) => return Err(e),
            }
        } else {
            let mut bytes = Vec::new();
            if read_field(&mut field, TEXT_FIELD_MAX as u64, &mut bytes).await?.is_some() {
                return Err(ApiError::Validation(vec![ValidationItem::new(
                    "string_too_long",
                    vec![json!("body"), json!(name)],
                    format!("Form field should have at most {TEXT_FIELD_MAX} bytes"),
                    serde_json::Value::Null,
                )]));
            }
            if filename.is_none() {
                form.text.push((name, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    Ok(())
}

/// 422 for a multipart body that cannot be read to its end (cut short, a broken part).
fn malformed(cause: &str) -> ApiError {
    ApiError::Validation(vec![ValidationItem::new(
        "multipart_invalid",
        vec![json!("body")],
        format!("Malformed multipart body: {cause}"),
        serde_json::Value::Null,
    )])
}

/// 422 for a form field given more than once: which one was meant is not for us to guess.
fn given_twice(name: &str) -> ApiError {
    ApiError::Validation(vec![ValidationItem::new(
        "multipart_duplicate_field",
        vec![json!("body"), json!(name)],
        format!("Form field '{name}' is given more than once"),
        serde_json::Value::Null,
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(disposition: &str) -> Option<String> {
        let mut headers = header::HeaderMap::new();
        headers.insert(header::CONTENT_DISPOSITION, header::HeaderValue::from_str(disposition).unwrap());
        windows_path_file_name(&headers)
    }

    #[test]
    fn a_windows_path_sent_unescaped_gives_its_file_name() {
        let d = |f: &str| format!("form-data; name=\"file\"; filename=\"{f}\"");
        assert_eq!(name_of(&d(r"C:\Users\me\report.txt")).as_deref(), Some("report.txt"));
        assert_eq!(name_of(&d(r"\\server\share\notes.md")).as_deref(), Some("notes.md"));
        assert_eq!(name_of(&format!("form-data; name=file; FILENAME=\"{}\"", r"d:\a.pdf")).as_deref(), Some("a.pdf"));
        // Everything else is left to the parser: plain names, escaped backslashes, other forms.
        for other in [
            d("report.txt"),
            d(r"C:\\Users\\me\\report.txt"),
            d(r"a\b.txt"),
            d(r"C:\"),
            "form-data; name=\"file\"; filename*=UTF-8''C%3A%5Ca.txt".to_owned(),
            "form-data; name=\"file\"".to_owned(),
        ] {
            assert_eq!(name_of(&other), None, "{other}");
        }
    }

    #[test]
    fn file_names_are_read_from_either_form() {
        let of = |d: &str| {
            let mut headers = header::HeaderMap::new();
            headers.insert(header::CONTENT_DISPOSITION, header::HeaderValue::from_str(d).unwrap());
            file_name_of(&headers)
        };
        assert_eq!(of("form-data; name=\"file\"; filename=\"a.txt\"").as_deref(), Some("a.txt"));
        assert_eq!(of("form-data; name=\"file\"; filename*=UTF-8''r%C3%A9sum%C3%A9.md").as_deref(), Some("résumé.md"));
        assert_eq!(of("form-data; name=\"file\"; filename*=iso-8859-1'fr'caf%E9.txt").as_deref(), Some("café.txt"));
        // Both: `filename*` wins (the plain one is the fallback for old parsers).
        let both = "form-data; name=\"file\"; filename=\"resume.md\"; filename*=UTF-8''r%C3%A9sum%C3%A9.md";
        assert_eq!(of(both).as_deref(), Some("résumé.md"));
        assert_eq!(of(&format!("form-data; name=\"file\"; filename=\"{}\"", r"C:\u\a.pdf")).as_deref(), Some("a.pdf"));
        assert_eq!(of("form-data; name=\"session_id\""), None);
    }
}
