//! `EventBus`: an in-process broadcast (embedded default) and PostgreSQL `LISTEN/NOTIFY` so
//! that a waiter on one replica hears about a job run on another.

use std::time::Duration;

use futures_util::StreamExt;
use redline_ports::jobs::Signal;
use redline_ports::EventBus;
use tokio::sync::broadcast;

const CHANNEL: &str = "redline_jobs";
/// Signals buffered per subscriber; a slow subscriber that falls behind only misses hints.
const CAPACITY: usize = 4096;

fn encode(signal: &Signal) -> String {
    match signal {
        Signal::Queued => "q".to_owned(),
        Signal::Job(id) => format!("j:{id}"),
        Signal::Events(id) => format!("e:{id}"),
        Signal::KeyRevoked(id) => format!("k:{id}"),
        Signal::SessionsChanged(owner) => format!("s:{owner}"),
        Signal::Reconnected => "r".to_owned(),
    }
}

fn decode(payload: &str) -> Option<Signal> {
    match payload {
        "q" => Some(Signal::Queued),
        "r" => Some(Signal::Reconnected),
        _ => payload
            .strip_prefix("j:")
            .map(|id| Signal::Job(id.to_owned()))
            .or_else(|| payload.strip_prefix("e:").map(|id| Signal::Events(id.to_owned())))
            .or_else(|| payload.strip_prefix("k:").map(|id| Signal::KeyRevoked(id.to_owned())))
            .or_else(|| payload.strip_prefix("s:").map(|owner| Signal::SessionsChanged(owner.to_owned()))),
    }
}

/// Signals within one process.
pub struct LocalBus {
    tx: broadcast::Sender<Signal>,
}

impl Default for LocalBus {
    fn default() -> Self {
        Self { tx: broadcast::channel(CAPACITY).0 }
    }
}

#[async_trait::async_trait]
impl EventBus for LocalBus {
    async fn publish(&self, signal: Signal) {
        let _ = self.tx.send(signal);
    }

    fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.tx.subscribe()
    }
}

/// Signals across replicas through PostgreSQL. Local subscribers hear local signals at
/// once and remote ones through `LISTEN`; a duplicate is harmless (signals are hints).
pub struct PgBus {
    local: broadcast::Sender<Signal>,
    notify: tokio::sync::mpsc::UnboundedSender<String>,
}

impl PgBus {
    /// Starts the listening and notifying connections (reconnecting on failure) on the
    /// current tokio runtime.
    pub fn start(url: &str) -> Self {
        let (local, _) = broadcast::channel(CAPACITY);
        let (notify, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        tokio::spawn(listen_loop(url.to_owned(), local.clone()));
        tokio::spawn(notify_loop(url.to_owned(), rx));
        Self { local, notify }
    }
}

#[async_trait::async_trait]
impl EventBus for PgBus {
    async fn publish(&self, signal: Signal) {
        if signal != Signal::Reconnected {
            let _ = self.notify.send(encode(&signal));
        }
        let _ = self.local.send(signal);
    }

    fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.local.subscribe()
    }
}

async fn listen_loop(url: String, local: broadcast::Sender<Signal>) {
    let mut backoff = Duration::from_millis(200);
    loop {
        match tokio_postgres::connect(&url, tokio_postgres::NoTls).await {
            Ok((client, mut connection)) => {
                let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                let sql = format!("LISTEN {CHANNEL}");
                let ok = {
                    // The connection must be driven while LISTEN runs.
                    let listen = client.batch_execute(&sql);
                    let mut listen = std::pin::pin!(listen);
                    loop {
                        tokio::select! {
                            r = &mut listen => break r.is_ok(),
                            m = messages.next() => if m.is_none() { break false },
                        }
                    }
                };
                if ok {
                    backoff = Duration::from_millis(200);
                    // What other replicas sent before this LISTEN (while the link was down,
                    // or before it first came up) is lost.
                    let _ = local.send(Signal::Reconnected);
                    while let Some(message) = messages.next().await {
                        match message {
                            Ok(tokio_postgres::AsyncMessage::Notification(n)) => {
                                if let Some(signal) = decode(n.payload()) {
                                    let _ = local.send(signal);
                                }
                            }
                            Ok(_) => {}
                            Err(e) => {
                                tracing::warn!(error = %e, "event bus: the LISTEN connection failed");
                                break;
                            }
                        }
                    }
                }
                drop(client);
            }
            Err(e) => tracing::warn!(error = %e, "event bus: cannot connect to listen"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

async fn notify_loop(url: String, mut rx: tokio::sync::mpsc::UnboundedReceiver<String>) {
    let mut backoff = Duration::from_millis(200);
    'connect: loop {
        match tokio_postgres::connect(&url, tokio_postgres::NoTls).await {
            Ok((client, connection)) => {
                let driver = tokio::spawn(async move {
                    let _ = connection.await;
                });
                backoff = Duration::from_millis(200);
                while let Some(payload) = rx.recv().await {
                    if let Err(e) = client.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload]).await {
                        tracing::warn!(error = %e, "event bus: NOTIFY failed");
                        driver.abort();
                        tokio::time::sleep(backoff).await;
                        continue 'connect;
                    }
                }
                driver.abort();
                return;
            }
            Err(e) => tracing::warn!(error = %e, "event bus: cannot connect to notify"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip() {
        for s in [
            Signal::Queued,
            Signal::Job("4f0c".into()),
            Signal::Events("4f0c".into()),
            Signal::KeyRevoked("0193".into()),
            Signal::SessionsChanged("user:0193".into()),
            Signal::Reconnected,
        ] {
            assert_eq!(decode(&encode(&s)), Some(s));
        }
        assert_eq!(decode("junk"), None);
    }
}
