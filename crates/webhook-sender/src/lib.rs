//! The [`WebhookSender`] adapter: one POST per attempt over reqwest (rustls), with a timeout,
//! no redirect followed and no proxy taken from the environment. Unless the operator allows
//! it (`REDLINE_WEBHOOK_ALLOW_PRIVATE`), a request never goes to a loopback, private or
//! link-local address: a literal address is checked before sending, and a host name's
//! addresses are checked by the resolver the connection uses, so a name that resolves to an
//! internal address (DNS rebinding included) is refused where it would connect.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use redline_domain::webhook::ip_is_public;
use redline_ports::{OutgoingWebhook, SendOutcome, WebhookSender};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// A host name whose every address is refused.
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} resolves only to loopback, private or link-local addresses", self.0)
    }
}

impl std::error::Error for Refused {}

struct GuardedResolver {
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = found.into_iter().filter(|a| allow_private || ip_is_public(a.ip())).collect();
            if kept.is_empty() {
                return Err(Box::new(Refused(host)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

pub struct HttpSender {
    client: reqwest::Client,
    allow_private: bool,
}

impl HttpSender {
    pub fn new(allow_private: bool) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .dns_resolver(Arc::new(GuardedResolver { allow_private }))
            .build()
            .map_err(|e| format!("cannot build the webhook client: {e}"))?;
        Ok(Self { client, allow_private })
    }
}

/// The sentence of a failed request, from the innermost cause that says what happened.
fn why(error: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refused) = e.downcast_ref::<Refused>() {
            return format!("not sent: {refused} (the server is not allowed to deliver there)");
        }
        source = e.source();
    }
    if error.is_timeout() {
        "no answer in time (timed out)".to_owned()
    } else if error.is_connect() {
        format!("could not connect: {error}")
    } else {
        format!("the request failed: {error}")
    }
}

#[async_trait::async_trait]
impl WebhookSender for HttpSender {
    async fn send(&self, request: OutgoingWebhook<'_>) -> SendOutcome {
        let url = match reqwest::Url::parse(request.url) {
            Ok(url) => url,
            Err(e) => return SendOutcome::Failed(format!("not sent: the URL cannot be read ({e})")),
        };
        let host = url.host_str().unwrap_or_default();
        let literal = host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().ok();
        if let Some(ip) = literal.filter(|ip| !self.allow_private && !ip_is_public(*ip)) {
            return SendOutcome::Failed(format!(
                "not sent: {ip} is a loopback, private or link-local address (the server is not allowed to deliver there)"
            ));
        }
        let mut builder = self.client.post(url).timeout(request.timeout).body(request.body.to_owned());
        for (name, value) in request.headers {
            builder = builder.header(name, value);
        }
        match builder.send().await {
            Ok(answer) => SendOutcome::Answered(answer.status().as_u16()),
            Err(e) => SendOutcome::Failed(why(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn request(url: &str) -> OutgoingWebhook<'_> {
        OutgoingWebhook {
            url,
            headers: vec![("webhook-id", "msg_1".to_owned())],
            body: "{}",
            timeout: Duration::from_secs(5),
        }
    }

    /// A server that answers every request with `answer` and counts them.
    async fn server(answer: &'static str) -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        (addr, seen)
    }

    #[tokio::test]
    async fn private_addresses_are_refused_unless_allowed() {
        let (addr, seen) = server("HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n").await;
        let refusing = HttpSender::new(false).unwrap();
        for url in [format!("http://{addr}/hook"), format!("http://localhost:{}/hook", addr.port())] {
            match refusing.send(request(&url)).await {
                SendOutcome::Failed(why) => assert!(why.starts_with("not sent:"), "{why}"),
                other => panic!("{url} was sent: {other:?}"),
            }
        }
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 0);
        let allowing = HttpSender::new(true).unwrap();
        assert_eq!(allowing.send(request(&format!("http://{addr}/hook"))).await, SendOutcome::Answered(204));
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn redirects_are_not_followed() {
        let (target, followed) = server("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await;
        let redirect: &'static str = Box::leak(
            format!("HTTP/1.1 307 Temporary Redirect\r\nlocation: http://{target}/\r\ncontent-length: 0\r\n\r\n")
                .into_boxed_str(),
        );
        let (addr, _) = server(redirect).await;
        let sender = HttpSender::new(true).unwrap();
        assert_eq!(sender.send(request(&format!("http://{addr}/hook"))).await, SendOutcome::Answered(307));
        assert_eq!(followed.load(std::sync::atomic::Ordering::SeqCst), 0);
    }
}
