"""What the loopback benchmarks share: a free port, and `redline serve` on SQLite in a
temporary folder until the block ends."""
import contextlib
import os
import socket
import subprocess
import tempfile
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@contextlib.contextmanager
def serve(binary, **env):
    """Runs `binary serve` with `env` (REDLINE_* settings) beside the defaults; yields its
    base URL once /healthz answers, and stops it after."""
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        full = {"PATH": os.environ["PATH"], "REDLINE_DATA_DIR": data, "REDLINE_BIND": f"127.0.0.1:{port}", **env}
        server = subprocess.Popen([binary, "serve"], env=full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(base + "/healthz").read()
                    break
                except OSError:
                    time.sleep(0.1)
            yield base
        finally:
            server.terminate()
            server.wait()
