//! A finished job as one compressed value.
//!
//! A job's request, state, result and metadata are four JSON columns, and each of its events
//! is a row of `job_events` (keyed by the job's id, again in every row). Once the job has been
//! finished for [`ARCHIVE_AFTER_MS`], the sweep folds them into `jobs.archive`: one JSON object
//! compressed with deflate over a dictionary of archives' JSON (`codec.rs`; about a ninth of
//! its size), and the columns and event rows are emptied. Nothing a caller reads changes: a
//! record and its events are read back from the archive as they were written. A finished job
//! is deleted at retention either way.

use redline_ports::jobs::JobEvent;
use redline_ports::StoreError;
use serde_json::Value;

/// How long a finished job keeps its columns and event rows before the sweep archives it:
/// long enough for the streams and waits that saw it finish to read it as it is.
pub(crate) const ARCHIVE_AFTER_MS: i64 = 10_000;

/// Jobs archived per sweep at most: a sweep's transaction stays short.
pub(crate) const ARCHIVE_BATCH: i64 = 500;

/// What an archive holds.
#[derive(Debug, PartialEq)]
pub(crate) struct Parts {
    pub request: Value,
    pub state: Value,
    pub result: Option<Value>,
    pub metadata: Value,
    pub events: Vec<JobEvent>,
}

/// An event row: sequence, kind, content (JSON text), time.
pub(crate) type EventRow = (i64, String, String, i64);

/// The archive of a job whose columns hold these JSON texts and whose events are these rows
/// (oldest first). The texts are written as they are: the columns hold what
/// `serde_json::Value::to_string` wrote.
pub(crate) fn pack(request: &str, state: &str, result: Option<&str>, metadata: &str, events: &[EventRow]) -> Vec<u8> {
    let size = request.len() + state.len() + metadata.len() + result.map_or(4, str::len);
    let mut json = String::with_capacity(size + events.iter().map(|e| e.2.len() + 48).sum::<usize>() + 64);
    json.push_str("{\"request\":");
    json.push_str(request);
    json.push_str(",\"state\":");
    json.push_str(state);
    json.push_str(",\"result\":");
    json.push_str(result.unwrap_or("null"));
    json.push_str(",\"metadata\":");
    json.push_str(metadata);
    json.push_str(",\"events\":[");
    for (i, (sequence, kind, content, at)) in events.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!("[{sequence},{},{content},{at}]", Value::String(kind.clone())));
    }
    json.push_str("]}");
    crate::codec::pack(json.as_bytes(), crate::codec::Codec::Dense)
}

fn corrupt(why: impl std::fmt::Display) -> StoreError {
    StoreError::Other(format!("corrupt job archive: {why}"))
}

/// What an archive holds, or why it cannot be read.
pub(crate) fn unpack(archive: &[u8]) -> Result<Parts, StoreError> {
    let bytes = crate::codec::unpack(archive).map_err(corrupt)?;
    let mut v: Value = serde_json::from_slice(&bytes).map_err(corrupt)?;
    let mut take = |key: &str| v.get_mut(key).map(Value::take).ok_or_else(|| corrupt(format!("no {key}")));
    let request = take("request")?;
    let state = take("state")?;
    let result = Some(take("result")?).filter(|r| !r.is_null());
    let metadata = take("metadata")?;
    let Value::Array(rows) = take("events")? else {
        return Err(corrupt("events are not a list"));
    };
    let events = rows
        .into_iter()
        .map(|row| match row {
            Value::Array(mut a) if a.len() == 4 => {
                let number = |v: &Value| v.as_i64().ok_or_else(|| corrupt("an event's number is not one"));
                let sequence = number(&a[0])?;
                let at = number(&a[3])?;
                let kind = a[1].as_str().ok_or_else(|| corrupt("an event's kind is not text"))?.to_owned();
                Ok(JobEvent { sequence, kind, content: a[2].take(), at })
            }
            _ => Err(corrupt("an event is not [sequence, kind, content, time]")),
        })
        .collect::<Result<_, _>>()?;
    Ok(Parts { request, state, result, metadata, events })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_archive_reads_back_what_was_archived() {
        let events = vec![
            (1, "status".to_owned(), json!({"message": "Reading \"it\""}).to_string(), 10),
            (2, "text_delta".to_owned(), json!({"text": "é\n"}).to_string(), 11),
        ];
        let request = json!({"message": "replace \"a\" with \"b\"", "format": 2});
        let result = json!({"response": "done", "n": [1, 2.5, null]});
        let packed = pack(&request.to_string(), "{}", Some(&result.to_string()), "{\"m\":1}", &events);
        let parts = unpack(&packed).unwrap();
        assert_eq!(parts.request, request);
        assert_eq!(parts.state, json!({}));
        assert_eq!(parts.result, Some(result));
        assert_eq!(parts.metadata, json!({"m": 1}));
        assert_eq!(
            parts.events,
            vec![
                JobEvent { sequence: 1, kind: "status".into(), content: json!({"message": "Reading \"it\""}), at: 10 },
                JobEvent { sequence: 2, kind: "text_delta".into(), content: json!({"text": "é\n"}), at: 11 },
            ]
        );
    }

    #[test]
    fn a_job_without_result_or_events_reads_back_so() {
        let parts = unpack(&pack("{}", "{}", None, "{}", &[])).unwrap();
        assert_eq!((parts.result, parts.events.len()), (None, 0));
    }

    #[test]
    fn a_damaged_archive_is_an_error() {
        assert!(unpack(&[9, 9]).is_err());
        assert!(unpack(&crate::codec::pack(b"{\"request\":{}}", crate::codec::Codec::Dense)).is_err());
        assert!(unpack(&crate::codec::pack(b"not json", crate::codec::Codec::Dense)).is_err());
    }
}
