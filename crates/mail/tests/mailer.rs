//! The two transports against real receivers: the outbox folder, and a small SMTP server
//! started on loopback by the test.

use std::time::Duration;

use redline_domain::Email;
use redline_mail::{open, MailTransport, DEFAULT_FROM};
use redline_ports::mail::{MailError, OutgoingMail};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

fn mail(to: &str) -> OutgoingMail {
    OutgoingMail {
        to: Email::parse(to).unwrap(),
        subject: "Your export is ready".into(),
        text: "Download: http://127.0.0.1:8080/v1/documents/export/download/exp_1.2.abc\n".into(),
        html: Some(
            "<p><a href=\"http://127.0.0.1:8080/v1/documents/export/download/exp_1.2.abc\">Download</a></p>".into(),
        ),
    }
}

#[tokio::test]
async fn outbox_writes_one_whole_eml_per_message() {
    let dir = tempfile::tempdir().unwrap();
    let outbox = dir.path().join("outbox");
    let mailer = open(&MailTransport::Outbox(outbox.clone()), DEFAULT_FROM).unwrap();
    assert!(outbox.is_dir(), "the outbox is created");
    mailer.send(&mail("ann@example.com")).await.unwrap();
    mailer.send(&mail("bob@example.com")).await.unwrap();

    let mut names: Vec<String> =
        std::fs::read_dir(&outbox).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().all(|n| n.ends_with(".eml")), "no partial file is left: {names:?}");
    let texts: Vec<String> = names.iter().map(|n| std::fs::read_to_string(outbox.join(n)).unwrap()).collect();
    assert!(texts.iter().any(|t| t.contains("To: ann@example.com")));
    assert!(texts.iter().any(|t| t.contains("To: bob@example.com")));
    for t in &texts {
        assert!(t.contains("Subject: Your export is ready"), "{t}");
        assert!(t.contains("/v1/documents/export/download/"), "{t}");
    }
}

#[tokio::test]
async fn outbox_that_cannot_be_written_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let outbox = dir.path().join("outbox");
    let mailer = open(&MailTransport::Outbox(outbox.clone()), DEFAULT_FROM).unwrap();
    std::fs::remove_dir(&outbox).unwrap();
    std::fs::write(&outbox, b"a file where the folder was").unwrap();
    let r = mailer.send(&mail("ann@example.com")).await;
    assert!(matches!(r, Err(MailError::Unavailable(_))), "{r:?}");
}

/// Accepts one SMTP session and answers the message's DATA.
async fn smtp_sink(listener: TcpListener, reject_rcpt: bool) -> (Vec<String>, String) {
    let (socket, _) = listener.accept().await.unwrap();
    let (read, mut write) = socket.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut commands = Vec::new();
    let mut data = String::new();
    write.write_all(b"220 sink ESMTP ready\r\n").await.unwrap();
    while let Ok(Some(line)) = lines.next_line().await {
        let verb = line.split_whitespace().next().unwrap_or_default().to_ascii_uppercase();
        commands.push(line.clone());
        let answer: &[u8] = match verb.as_str() {
            "EHLO" | "HELO" => b"250 sink\r\n",
            "RCPT" if reject_rcpt => b"550 no such user here\r\n",
            "MAIL" | "RCPT" | "RSET" | "NOOP" => b"250 OK\r\n",
            "DATA" => {
                write.write_all(b"354 go ahead\r\n").await.unwrap();
                while let Ok(Some(l)) = lines.next_line().await {
                    if l == "." {
                        break;
                    }
                    data.push_str(&l);
                    data.push('\n');
                }
                b"250 queued\r\n"
            }
            "QUIT" => {
                write.write_all(b"221 bye\r\n").await.unwrap();
                break;
            }
            _ => b"502 not implemented\r\n",
        };
        write.write_all(answer).await.unwrap();
    }
    (commands, data)
}

#[tokio::test]
async fn smtp_hands_the_message_to_the_server() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(smtp_sink(listener, false));
    let mailer = open(&MailTransport::Smtp(format!("smtp://127.0.0.1:{port}")), DEFAULT_FROM).unwrap();
    mailer.send(&mail("ann@example.com")).await.unwrap();
    drop(mailer);
    let (commands, data) = tokio::time::timeout(Duration::from_secs(30), server).await.unwrap().unwrap();
    assert!(commands.iter().any(|c| c.starts_with("MAIL FROM:<no-reply@redline.invalid>")), "{commands:?}");
    assert!(commands.iter().any(|c| c.starts_with("RCPT TO:<ann@example.com>")), "{commands:?}");
    assert!(data.contains("Subject: Your export is ready"), "{data}");
    assert!(data.contains("/v1/documents/export/download/"), "{data}");
}

#[tokio::test]
async fn smtp_refusal_is_a_rejection() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let _server = tokio::spawn(smtp_sink(listener, true));
    let mailer = open(&MailTransport::Smtp(format!("smtp://127.0.0.1:{port}")), DEFAULT_FROM).unwrap();
    let r = mailer.send(&mail("nobody@example.com")).await;
    assert!(matches!(r, Err(MailError::Rejected(_))), "{r:?}");
}

#[tokio::test]
async fn smtp_server_down_is_unavailable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mailer = open(&MailTransport::Smtp(format!("smtp://127.0.0.1:{port}")), DEFAULT_FROM).unwrap();
    let r = mailer.send(&mail("ann@example.com")).await;
    assert!(matches!(r, Err(MailError::Unavailable(_))), "{r:?}");
}
