#!/usr/bin/env python3
"""A webhook receiver for the tests (crates/app/tests/api/webhooks.rs).

Verifies every request with the Standard Webhooks reference library (PyPI `standardwebhooks`),
never with Redline's own code, and appends one JSON line per request to the log file:
{"id", "type", "verified", "data", "secret_index", "status", "at"}.

    webhook-receiver.py PORT LOG SECRETS [FAIL_FIRST]

SECRETS is a file of secrets, one per line, read again at each request (the test writes it
once it has created the endpoint); `secret_index` is the first line whose secret verifies.
The first FAIL_FIRST requests are answered 500 (a receiver that is down for a while).
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

PORT, LOG, SECRETS = int(sys.argv[1]), sys.argv[2], sys.argv[3]
FAIL_FIRST = int(sys.argv[4]) if len(sys.argv) > 4 else 0
lock = threading.Lock()
seen = 0


def secrets():
    try:
        with open(SECRETS, encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]
    except FileNotFoundError:
        return []


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k: v for k, v in self.headers.items()}
        verified, index, payload = False, None, None
        for i, secret in enumerate(secrets()):
            try:
                payload = Webhook(secret).verify(body, headers)
                verified, index = True, i
                break
            except WebhookVerificationError:
                continue
        with lock:
            seen += 1
            status = 500 if seen <= FAIL_FIRST else 200
            line = {
                "id": headers.get("webhook-id"),
                "type": (payload or {}).get("type"),
                "verified": verified,
                "data": (payload or {}).get("data"),
                "secret_index": index,
                "status": status,
                "at": time.time(),
            }
            with open(LOG, "a", encoding="utf-8") as log:
                log.write(json.dumps(line) + "\n")
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
