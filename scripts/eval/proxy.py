"""A recording HTTP proxy between a client (Redline, or the baseline) and an OpenAI-compatible
model server, run in a thread of the evaluation.

It forwards every request unchanged to the upstream's base URL and passes the answer back as
it comes (a streamed SSE answer chunk by chunk, so the client's between-chunks timeout keeps
working), and it records per label (the evaluation sets one per task and strategy): the number
of model calls, the prompt and completion tokens, and each call's request and answer in a
JSONL log. Tokens come from the answer's `usage` (the body's, or the last SSE chunk's, which
Redline asks for with `stream_options.include_usage`); when there is none, from llama-server's
`timings.prompt_n` / `timings.predicted_n`. `prompt_processed` is llama-server's
`timings.prompt_n` (tokens not found in its prompt cache) when it says so. An upstream answer
that says the prompt exceeds the context (llama-server: "exceeds the available context size")
is recorded as a context overflow.
"""
import http.client
import http.server
import json
import socketserver
import threading
import time
import urllib.parse

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
       "content-length", "host", "accept-encoding", "date", "server"}


class Stats:
    def __init__(self):
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.prompt_processed = 0
        self.seconds = 0.0
        self.errors = []
        self.context_overflow = False
        self.answers = []  # short records of each call's answer, for reports

    def as_dict(self):
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "prompt_processed": self.prompt_processed,
                "model_seconds": round(self.seconds, 2), "errors": self.errors,
                "context_overflow": self.context_overflow}


def _parse_sse(raw):
    """The pieces of a streamed Chat Completions answer: text, tool calls, finish, usage, timings."""
    text, calls, finish, usage, timings = [], {}, None, None, None
    for event in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        for line in event.split(b"\n"):
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if not data or data == b"[DONE]":
                continue
            try:
                obj = json.loads(data)
            except ValueError:
                continue
            usage = obj.get("usage") or usage
            timings = obj.get("timings") or timings
            for ch in obj.get("choices") or []:
                d = ch.get("delta") or {}
                if d.get("content"):
                    text.append(d["content"])
                for tc in d.get("tool_calls") or []:
                    slot = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                    f = tc.get("function") or {}
                    slot["name"] += f.get("name") or ""
                    slot["arguments"] += f.get("arguments") or ""
                finish = ch.get("finish_reason") or finish
    return "".join(text), [calls[k] for k in sorted(calls)], finish, usage, timings


def _parse_json(raw):
    try:
        obj = json.loads(raw)
    except ValueError:
        return None, [], None, None, None
    ch = (obj.get("choices") or [{}])[0]
    msg = ch.get("message") or {}
    calls = [{"name": (c.get("function") or {}).get("name"), "arguments": (c.get("function") or {}).get("arguments")}
             for c in msg.get("tool_calls") or []]
    return msg.get("content"), calls, ch.get("finish_reason"), obj.get("usage"), obj.get("timings")


class RecordingProxy:
    def __init__(self, upstream, log_path, timeout):
        u = urllib.parse.urlsplit(upstream.rstrip("/"))
        self.up_host, self.up_port = u.hostname, u.port or 80
        self.up_prefix = u.path  # e.g. /v1
        self.timeout = timeout
        self.log = open(log_path, "a", encoding="utf-8")
        self.lock = threading.Lock()
        self.label = None
        self.stats = {}
        self.seq = 0
        self.inflight = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                proxy._forward(self, None)

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                proxy._forward(self, self.rfile.read(n) if n else b"")

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def set_label(self, label):
        with self.lock:
            self.label = label
            if label is not None:
                self.stats.setdefault(label, Stats())

    def stats_for(self, label):
        return self.stats.get(label) or Stats()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.log.close()

    def wait_idle(self, timeout=30.0):
        """Waits until no call is being forwarded: a client (Redline) has the whole answer a
        moment before the proxy has counted it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if self.inflight == 0:
                    return
            time.sleep(0.02)

    def _forward(self, h, body):
        with self.lock:
            self.inflight += 1
        try:
            self._forward_counted(h, body)
        finally:
            with self.lock:
                self.inflight -= 1

    def _forward_counted(self, h, body):
        with self.lock:
            label = self.label
            self.seq += 1
            seq = self.seq
        path = h.path
        if path.startswith("/v1"):
            path = self.up_prefix + path[3:]
        headers = {k: v for k, v in h.headers.items() if k.lower() not in HOP}
        headers["Accept-Encoding"] = "identity"
        started = time.monotonic()
        record = {"seq": seq, "label": label, "path": h.path}
        try:
            req = json.loads(body) if body else None
        except ValueError:
            req = None
        record["request"] = req
        conn = http.client.HTTPConnection(self.up_host, self.up_port, timeout=self.timeout)
        raw = b""
        try:
            conn.request(h.command, path, body=body, headers=headers)
            resp = conn.getresponse()
            ctype = resp.getheader("Content-Type", "")
            h.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in HOP:
                    h.send_header(k, v)
            streamed = ctype.startswith("text/event-stream")
            if streamed:
                h.send_header("Connection", "close")
                h.close_connection = True
                h.end_headers()
                while True:
                    piece = resp.read1(65536)
                    if not piece:
                        break
                    raw += piece
                    h.wfile.write(piece)
                    h.wfile.flush()
            else:
                raw = resp.read()
                h.send_header("Content-Length", str(len(raw)))
                h.end_headers()
                h.wfile.write(raw)
            record["status"] = resp.status
        except Exception as e:  # upstream silent or gone: the client sees a 504
            record["status"] = 504
            record["error"] = f"{type(e).__name__}: {e}"
            try:
                msg = json.dumps({"error": {"message": f"eval proxy: upstream failed: {e}"}}).encode()
                h.send_response(504)
                h.send_header("Content-Type", "application/json")
                h.send_header("Content-Length", str(len(msg)))
                h.end_headers()
                h.wfile.write(msg)
            except Exception:
                pass
            streamed = False
        finally:
            conn.close()
        elapsed = time.monotonic() - started
        if streamed:
            text, calls, finish, usage, timings = _parse_sse(raw)
        else:
            text, calls, finish, usage, timings = _parse_json(raw) if raw else (None, [], None, None, None)
        record.update(seconds=round(elapsed, 3), streamed=streamed, content=text, tool_calls=calls,
                      finish_reason=finish, usage=usage, timings=timings)
        if record.get("status", 0) >= 400 and "error" not in record:
            record["error"] = raw[:2000].decode("utf-8", "replace")
        with self.lock:
            st = self.stats.setdefault(label, Stats())
            if h.path.rstrip("/").endswith("/chat/completions"):
                st.calls += 1
            st.seconds += elapsed
            u = usage or {}
            t = timings or {}
            st.prompt_tokens += int(u.get("prompt_tokens") or t.get("prompt_n") or 0)
            st.completion_tokens += int(u.get("completion_tokens") or t.get("predicted_n") or 0)
            st.prompt_processed += int(t.get("prompt_n") or 0)
            if "error" in record:
                err = record["error"]
                st.errors.append(f"{record['status']}: {err[:300]}")
                if "context" in err and ("exceed" in err or "too long" in err or "context length" in err):
                    st.context_overflow = True
            if finish == "length":
                st.errors.append("the answer was cut at the token limit (finish_reason: length)")
            st.answers.append({"seq": seq, "content": (text or "")[:4000], "tool_calls": calls,
                               "finish_reason": finish})
            self.log.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.log.flush()
