#!/usr/bin/env python3
"""Evaluate Redline's whole editing loop with a real model, against the same model asked
directly for the whole revised document (issue 38, item 2).

    python3 scripts/eval/run.py --redline-bin target/release/redline \\
        --model-url http://127.0.0.1:8080/v1 --model local \\
        --protocols tools,blocks,rewrite --tasks all --out results.json

    python3 scripts/eval/run.py --redline-bin target/release/redline --builtin --tasks all --out builtin.json

Strategies. For each protocol of `--protocols` (a value of `REDLINE_EDIT_PROTOCOL`; a binary
that does not know the value ignores it) the script starts its own `redline serve` (SQLite in a
temporary folder, the model behind the recording proxy, temperature 0, seed 42), signs an agent
up, and runs every task the way a client would:

  1. `PUT /v1/documents/{session}` with the task's HTML (a new session per task), and for a task
     with an attachment `POST /v1/attachments/upload` of a TXT file, waiting for its processing;
  2. `GET /v1/documents/{session}`: the sections and their chunk ids before;
  3. `POST /v1/chat {session_id, message}` (synchronous): the answer is `response`;
  4. `GET /v1/documents/{session}` again, and the checks (checks.py, tasks/__init__.py).

The baseline (unless `--builtin` or `--no-baseline`) asks the same model through the same
proxy (temperature 0, seed 42, one user message, streamed) with the document as Redline stores
it (its HTML with the `data-chunk-id`s, as `GET /v1/documents` gives it and an HTML export
keeps it):

  * for edits and impossible requests: the document in a ```html fence, the request, "If the
    request cannot be carried out on this document, leave the document unchanged." and "Reply
    with the complete revised HTML document only." The HTML is taken from the answer's ```html
    fence (the longest, if several; else the longest fence of any language; else from the first
    `<` to the last `>`); the answer's text outside that HTML is its "answer" (for the claim
    counts). The HTML is then `PUT` into a fresh Redline session, as a user pasting it would,
    read back and checked like Redline's own result, except for how sections are matched:
    sections whose chunk ids the model kept are compared by id, and where it dropped ids the
    remaining sections are aligned in order on their HTML without the id, white space
    collapsed (checks.Matching with `align=True`); untouched means equal after that
    normalisation. Redline's turns are matched by chunk id only and compared byte for byte.
  * for questions (the task's `kind` says which tasks are questions, so the baseline is routed
    the way a person who knows what they asked would): the document, the question and "Answer
    the question from the document. Reply with the answer only."; the document is not touched,
    and the answer is checked like Redline's.
  * an attachment's text goes into either prompt after the document ("The user attached the
    file NAME:" and the text in a fence), as a user would paste it.

Figures per strategy: tasks right (the failed ones with their reasons), collateral damage
(sections outside the task's targets that are not untouched), model calls, prompt and
completion tokens (counted by the proxy, proxy.py), completion tokens per task done right on
the 50- and on the 500-section documents, wall time (the chat request, or the baseline's model
call), claimed edits that did not happen (the answer claims a change, checks.claims_change,
while no section changed), raw tool-call answers (checks.raw_tool_call: such an answer fails
its task, whatever the document, since the person reads it as the answer) and answers holding
HTML (a ```html fence or a `<p`/`<h1`… tag: the model wrote the document instead of editing
it). A model call that fails (context overflow, timeout) fails its task with the reason.

Output: a Markdown summary on stdout, the JSON at `--out`, and beside it `<out>.logs/` with
the proxy's log of every model call (`proxy.jsonl`: request, answer, usage) and each
server's log. `--min-right N` exits 1 when the first protocol got fewer than N tasks right, or when any
of its answers claims an edit that did not happen or is a raw tool call.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import checks  # noqa: E402
import tasks as taskset  # noqa: E402
from proxy import RecordingProxy, _parse_sse  # noqa: E402

SEED = 42

EDIT_PROMPT = """Here is an HTML document:

```html
{html}
```
{attachment}
Request: {request}

Apply the request to the document. If the request cannot be carried out on this document, \
leave the document unchanged. Reply with the complete revised HTML document only."""

QUESTION_PROMPT = """Here is an HTML document:

```html
{html}
```
{attachment}
Question: {request}

Answer the question from the document. Reply with the answer only."""

ATTACHMENT = """
The user attached the file {filename}:

```
{text}
```
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Redline:
    """One `redline serve` in a temporary data folder, with an agent's API key."""

    def __init__(self, binary, env_extra, log_path, http_timeout):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="redline-eval-")
        self.base = f"http://127.0.0.1:{self.port}"
        self.http_timeout = http_timeout
        env = dict(os.environ)
        env.update({"REDLINE_BIND": f"127.0.0.1:{self.port}", "REDLINE_DATA_DIR": self.dir,
                    "REDLINE_SIGNUP_COOLDOWN_SECS": "0"})
        env.update(env_extra)
        self.log_file = open(log_path, "ab")
        self.proc = subprocess.Popen([binary, "serve"], env=env, stdout=self.log_file, stderr=subprocess.STDOUT)
        self.s = requests.Session()
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise SystemExit(f"redline serve exited with {self.proc.returncode}; see {log_path}")
            try:
                if self.s.get(self.base + "/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"redline serve did not answer /healthz within 120 s; see {log_path}")
            time.sleep(0.2)
        self.signup()

    def signup(self):
        r = self.s.post(self.base + "/v1/agents/signup", json={"name": "eval"}, timeout=30)
        r.raise_for_status()
        self.s.headers["Authorization"] = "Bearer " + r.json()["api_key"]

    def call(self, method, path, timeout=None, **kw):
        return self.s.request(method, self.base + path, timeout=timeout or 60, **kw)

    def put_doc(self, sid, html):
        r = self.call("PUT", f"/v1/documents/{sid}", json={"html": html})
        return r

    def get_doc(self, sid):
        r = self.call("GET", f"/v1/documents/{sid}")
        r.raise_for_status()
        return r.json()["html"]

    def attach(self, sid, att):
        r = self.call("POST", "/v1/attachments/upload", data={"session_id": sid},
                      files={"file": (att["filename"], att["text"].encode("utf-8"), "text/plain")})
        if r.status_code != 202:
            raise RuntimeError(f"attachment upload answered {r.status_code}: {r.text[:300]}")
        job = r.json()["job_id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            st = self.call("GET", f"/v1/attachments/status/{job}").json()
            if st["status"] == "completed":
                return
            if st["status"] in ("failed", "cancelled"):
                raise RuntimeError(f"attachment processing {st['status']}: {st.get('error')}")
            time.sleep(0.2)
        raise RuntimeError("attachment processing took over 120 s")

    def chat(self, sid, message):
        body = {"session_id": sid, "message": message}
        r = self.call("POST", "/v1/chat", json=body, timeout=self.http_timeout)
        if r.status_code == 429:
            self.signup()  # the free tier's month is used up: a new agent
            r = self.call("POST", "/v1/chat", json=body, timeout=self.http_timeout)
        return r

    def version(self, binary):
        try:
            return subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:
            return None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()
        shutil.rmtree(self.dir, ignore_errors=True)


HTML_IN_ANSWER = re.compile(r"```html|<(p|h[1-6]|ul|ol|table|div)\b", re.I)


def evaluate(task, before, after_html, answer, align, tools=True):
    """The task's verdict: right, the reasons it is not, and the counts. With `tools` (Redline's
    turns), an answer that is tool-call text fails the task whatever the document: the person
    reads it as the answer."""
    after, problems = checks.split_sections(after_html)
    m = checks.Matching(before, after, align=align)
    fails = []
    if problems:
        fails.append("invalid document: " + "; ".join(problems[:3]))
    targets = set(task["targets"])
    collateral = [i for i in range(len(before)) if i not in targets and not m.untouched(i)]
    if collateral:
        fails.append(f"collateral damage: sections {collateral[:12]}{'…' if len(collateral) > 12 else ''} changed")
    changed = m.changed_count()
    if changed != task["changes"]:
        fails.append(f"{changed} sections changed, expected {task['changes']}")
    for c in task["checks"]:
        ok, desc = checks.run_check(c, m, answer)
        if not ok:
            fails.append("not " + desc)
    claim = checks.claims_change(answer)
    if task["kind"] == "impossible" and claim:
        fails.append("the answer claims a change")
    raw = tools and checks.raw_tool_call(answer)
    if raw:
        fails.append("the answer is tool-call text")
    return {
        "right": not fails, "reasons": fails, "collateral": len(collateral), "changed": changed,
        "edited": len(m.edited()), "created": len(m.created), "deleted": len(m.deleted),
        "claimed_unmade": bool(claim and changed == 0), "raw_tool_call": bool(raw),
        "html_answer": bool(tools and answer and HTML_IN_ANSWER.search(answer)),
    }


def setup_session(srv, sid, task):
    """The task's document (and attachment) in session `sid`: its sections, as stored."""
    r = srv.put_doc(sid, task["doc"])
    if r.status_code != 200:
        raise RuntimeError(f"PUT of the task's document answered {r.status_code}: {r.text[:300]}")
    if task.get("attachment"):
        srv.attach(sid, task["attachment"])
    html = srv.get_doc(sid)
    before, problems = checks.split_sections(html)
    blocks = task["doc"].strip().count("\n") + 1
    if problems or len(before) != blocks:
        raise RuntimeError(f"the stored task document has {len(before)} sections, not {blocks} ({problems[:2]})")
    return html, before


def run_redline_task(srv, proxy, strategy, task, run_id):
    sid = f"{run_id}-{task['id']}"
    _, before = setup_session(srv, sid, task)
    label = f"{strategy}:{task['id']}"
    if proxy:
        proxy.set_label(label)
    answer, error, body = None, None, {}
    t0 = time.monotonic()
    try:
        r = srv.chat(sid, task["request"])
    except requests.RequestException as e:
        r, error = None, f"POST /v1/chat failed: {e}"
    wall = time.monotonic() - t0
    if proxy:
        proxy.set_label(None)
    if r is not None:
        try:
            body = r.json()
        except ValueError:
            body = {}
        if r.status_code == 200:
            answer = body.get("response") or ""
        else:
            error = f"POST /v1/chat answered {r.status_code}: {str(body.get('detail') or r.text)[:300]}"
    after_html = srv.get_doc(sid)
    res = evaluate(task, before, after_html, answer, align=False)
    if error:
        res["right"] = False
        res["reasons"].insert(0, error)
    res.update(wall=round(wall, 2), answer=answer,
               redline_changes=len((body.get("document_changes") or {}).get("changes") or []))
    return label, res


def extract_html(text):
    """The HTML of a whole-document answer, and the answer's text around it."""
    fences = list(re.finditer(r"```[ \t]*([\w-]*)[ \t]*\n(.*?)```", text, re.S))
    html_f = [f for f in fences if f.group(1).lower() in ("html", "htm", "xml", "xhtml")]
    pick = max(html_f or fences, key=lambda f: len(f.group(2)), default=None)
    if pick:
        return pick.group(2), (text[:pick.start()] + text[pick.end():]).strip()
    open_fence = re.search(r"```[ \t]*html[ \t]*\n", text, re.I)
    if open_fence:  # cut before its closing fence
        return text[open_fence.end():], text[:open_fence.start()].strip()
    i, j = text.find("<"), text.rfind(">")
    if 0 <= i < j:
        return text[i:j + 1], (text[:i] + text[j + 1:]).strip()
    return "", text.strip()


def ask_model(proxy, model, prompt, timeout):
    """One streamed call through the proxy: the text, or an error."""
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0, "seed": SEED,
            "stream": True, "stream_options": {"include_usage": True}}
    started = time.monotonic()
    raw = b""
    try:
        with requests.post(proxy.base_url + "/chat/completions", json=body, stream=True,
                           timeout=(30, timeout), headers={"Authorization": "Bearer none"}) as r:
            if r.status_code != 200:
                return None, f"the model answered {r.status_code}: {r.text[:300]}"
            for piece in r.iter_content(chunk_size=512):
                raw += piece
                if time.monotonic() - started > timeout:
                    return None, f"the model call passed the {timeout} s limit"
    except requests.RequestException as e:
        return None, f"the model call failed: {e}"
    text, _, finish, _, _ = _parse_sse(raw)
    if finish == "length":
        return text, "the answer was cut at the context limit (finish_reason: length)"
    return text, None


def run_baseline_task(srv, proxy, model, task, timeout, run_id):
    sid = f"{run_id}-b-{task['id']}"
    stored, before = setup_session(srv, sid, task)
    att = task.get("attachment")
    att_text = ATTACHMENT.format(**att) if att else ""
    label = f"baseline:{task['id']}"
    proxy.set_label(label)
    t0 = time.monotonic()
    prompt = (QUESTION_PROMPT if task["kind"] == "question" else EDIT_PROMPT).format(
        html=stored.strip(), attachment=att_text, request=task["request"])
    text, error = ask_model(proxy, model, prompt, timeout)
    wall = time.monotonic() - t0
    proxy.set_label(None)
    st = proxy.stats_for(label)
    if st.context_overflow:
        error = "context overflow: " + (error or "")
    if task["kind"] == "question" or text is None:
        answer, after_html = text, stored
    else:
        html, answer = extract_html(text)
        after_html = stored
        if not html.strip():
            error = error or "no HTML in the answer"
        else:
            sid2 = f"{run_id}-c-{task['id']}"
            r = srv.put_doc(sid2, html)
            if r.status_code != 200:
                error = error or f"Redline refused the pasted HTML: {r.status_code} {r.text[:200]}"
            else:
                after_html = srv.get_doc(sid2)
    res = evaluate(task, before, after_html, answer, align=True, tools=False)
    if error:
        res["right"] = False
        res["reasons"].insert(0, error)
    res.update(wall=round(wall, 2), answer=(text or "")[:3000])
    return label, res


def summarize(results, tasks_by_id):
    s = {"tasks": len(results), "right": sum(r["right"] for r in results.values()),
         "failed": {k: r["reasons"] for k, r in results.items() if not r["right"]},
         "collateral": sum(r["collateral"] for r in results.values()),
         "calls": sum(r["calls"] for r in results.values()),
         "prompt_tokens": sum(r["prompt_tokens"] for r in results.values()),
         "prompt_processed": sum(r["prompt_processed"] for r in results.values()),
         "completion_tokens": sum(r["completion_tokens"] for r in results.values()),
         "wall": round(sum(r["wall"] for r in results.values()), 1),
         "claimed_unmade": sum(r["claimed_unmade"] for r in results.values()),
         "raw_tool_calls": sum(r["raw_tool_call"] for r in results.values()),
         "html_answers": sum(r["html_answer"] for r in results.values()),
         "context_overflows": sum(bool(r.get("context_overflow")) for r in results.values())}
    for size in (50, 500):
        rs = [r for k, r in results.items() if tasks_by_id[k]["size"] == size]
        right = sum(r["right"] for r in rs)
        comp = sum(r["completion_tokens"] for r in rs)
        s[f"tasks_{size}"] = len(rs)
        s[f"right_{size}"] = right
        s[f"completion_{size}"] = comp
        s[f"completion_per_right_{size}"] = round(comp / right, 1) if right else None
    return s


def markdown(out):
    strategies = out["strategies"]
    lines = ["| strategy | right | collateral | calls | prompt tok | completion tok | compl./right 50 | "
             "compl./right 500 | wall s | claimed, not made | raw tool calls | HTML answers |",
             "| - | - | - | - | - | - | - | - | - | - | - | - |"]
    for name, st in strategies.items():
        s = st["summary"]

        def per(size):
            v = s[f"completion_per_right_{size}"]
            return f"{v:,.0f} ({s[f'right_{size}']}/{s[f'tasks_{size}']})" if v is not None else \
                f"— (0/{s[f'tasks_{size}']})" if s[f"tasks_{size}"] else "—"
        lines.append(f"| {name} | {s['right']}/{s['tasks']} | {s['collateral']} | {s['calls']} | "
                     f"{s['prompt_tokens']:,} | {s['completion_tokens']:,} | {per(50)} | {per(500)} | "
                     f"{s['wall']:,.0f} | {s['claimed_unmade']} | {s['raw_tool_calls']} | {s['html_answers']} |")
    ids = list(next(iter(strategies.values()))["tasks"].keys()) if strategies else []
    lines += ["", "| task | category | " + " | ".join(strategies) + " |",
              "| - | - | " + " | ".join("-" for _ in strategies) + " |"]
    for tid in ids:
        cells = []
        for st in strategies.values():
            r = st["tasks"].get(tid)
            cells.append("—" if r is None else ("✓" if r["right"] else "✗") + f" {r['wall']:.0f}s")
        lines.append(f"| {tid} | {out['tasks'][tid]['category']} | " + " | ".join(cells) + " |")
    lines.append("")
    for name, st in strategies.items():
        failed = st["summary"]["failed"]
        if failed:
            lines.append(f"**{name}** failed:")
            for tid, reasons in failed.items():
                lines.append(f"- `{tid}`: " + "; ".join(reasons)[:400])
            lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--redline-bin", required=True)
    ap.add_argument("--model-url", help="the OpenAI-compatible server's base URL, e.g. http://127.0.0.1:8080/v1")
    ap.add_argument("--model", default="local")
    ap.add_argument("--protocols", default="auto", help="values of REDLINE_EDIT_PROTOCOL, comma-separated")
    ap.add_argument("--tasks", default="all", help="all, smoke, or ids and categories, comma-separated")
    ap.add_argument("--out", default="eval-results.json")
    ap.add_argument("--builtin", action="store_true", help="Redline's offline builtin model; no baseline")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--baseline-only", action="store_true")
    ap.add_argument("--call-timeout", type=int, default=600, help="one model call's limit, seconds")
    ap.add_argument("--turn-timeout", type=int, default=1800, help="one chat turn's limit, seconds")
    ap.add_argument("--min-right", type=int, help="exit 1 when the first protocol gets fewer tasks right, or any of "
                    "its answers claims an edit that did not happen or is a raw tool call")
    args = ap.parse_args()
    if not args.builtin and not args.model_url:
        ap.error("--model-url is required unless --builtin")
    binary = str(Path(args.redline_bin).resolve())
    if not os.access(binary, os.X_OK):
        ap.error(f"{binary} is not an executable")

    selected = taskset.select(args.tasks)
    tasks_by_id = {t["id"]: t for t in selected}
    out_path = Path(args.out)
    logs = out_path.with_name(out_path.name + ".logs")
    logs.mkdir(parents=True, exist_ok=True)
    protocols = [p.strip() for p in args.protocols.split(",") if p.strip()]
    run_id = datetime.datetime.now(datetime.timezone.utc).strftime("%H%M%S")

    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "redline_bin": binary, "model": "builtin" if args.builtin else args.model,
            "model_url": None if args.builtin else args.model_url, "protocols": protocols,
            "tasks_spec": args.tasks, "temperature": 0, "seed": SEED, "call_timeout": args.call_timeout}
    try:
        meta["redline_commit"] = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                                                capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    proxy = None
    if not args.builtin:
        try:
            meta["models"] = requests.get(args.model_url.rstrip("/") + "/models", timeout=10).json()
        except (requests.RequestException, ValueError) as e:
            raise SystemExit(f"the model server at {args.model_url} does not answer: {e}")
        proxy = RecordingProxy(args.model_url, logs / "proxy.jsonl", timeout=args.call_timeout + 30)

    out = {"meta": meta, "tasks": {t["id"]: {k: t[k] for k in ("category", "kind", "size", "smoke", "request")}
                                   for t in selected}, "strategies": {}}

    def save():
        out_path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")

    def record(strategy, tid, label, res):
        if proxy:
            proxy.wait_idle()
        st = proxy.stats_for(label).as_dict() if proxy else {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                                              "prompt_processed": 0, "errors": [],
                                                              "context_overflow": False}
        res.update({k: st[k] for k in ("calls", "prompt_tokens", "completion_tokens", "prompt_processed",
                                        "context_overflow")})
        res["model_errors"] = st["errors"]
        if st["context_overflow"] and not any("context" in x for x in res["reasons"]):
            res["reasons"].insert(0, "context overflow")
        entry = out["strategies"].setdefault(strategy, {"tasks": {}})
        entry["tasks"][tid] = res
        entry["summary"] = summarize(entry["tasks"], tasks_by_id)
        save()
        mark = "ok " if res["right"] else "FAIL"
        log(f"  [{strategy}] {tid:28} {mark} {res['wall']:7.1f}s calls={res['calls']} "
            f"tok={res['prompt_tokens']}/{res['completion_tokens']}"
            + ("" if res["right"] else "  " + "; ".join(res["reasons"])[:200]))

    def run_task_safely(fn, strategy, task):
        try:
            label, res = fn(task)
        except Exception as e:  # a setup failure fails the task, not the run
            if proxy:
                proxy.set_label(None)
            label = f"{strategy}:{task['id']}"
            res = {"right": False, "reasons": [f"{type(e).__name__}: {e}"], "collateral": 0, "changed": 0,
                   "edited": 0, "created": 0, "deleted": 0, "claimed_unmade": False, "raw_tool_call": False,
                   "html_answer": False, "wall": 0.0, "answer": None}
        record(strategy, task["id"], label, res)

    common = {"REDLINE_OPENAI_TIMEOUT_SECS": str(args.call_timeout),
              "REDLINE_CHAT_TIMEOUT_SECS": str(args.turn_timeout), "REDLINE_LOG": "info"}
    if not args.baseline_only:
        for protocol in protocols:
            strategy = "builtin" if args.builtin else f"redline:{protocol}"
            env = dict(common, REDLINE_EDIT_PROTOCOL=protocol)
            if args.builtin:
                env["REDLINE_LLM_PROVIDER"] = "builtin"
            else:
                env.update({"REDLINE_LLM_PROVIDER": "openai", "REDLINE_OPENAI_BASE_URL": proxy.base_url,
                            "REDLINE_OPENAI_MODEL": args.model, "REDLINE_OPENAI_API_KEY": "none",
                            "REDLINE_OPENAI_TEMPERATURE": "0", "REDLINE_OPENAI_SEED": str(SEED)})
            log(f"{strategy}: starting redline serve")
            srv = Redline(binary, env, logs / f"redline-{protocol}.log", args.turn_timeout + 120)
            meta.setdefault("redline_version", srv.version(binary))
            try:
                for task in selected:
                    run_task_safely(lambda t: run_redline_task(srv, proxy, strategy, t, run_id), strategy, task)
            finally:
                srv.stop()
            if args.builtin:
                break
    if not args.builtin and not args.no_baseline:
        log("baseline: starting redline serve (for storing and reading documents only)")
        srv = Redline(binary, dict(common, REDLINE_LLM_PROVIDER="builtin"), logs / "redline-baseline.log", 120)
        try:
            for task in selected:
                run_task_safely(lambda t: run_baseline_task(srv, proxy, args.model, t, args.call_timeout, run_id),
                                "baseline", task)
        finally:
            srv.stop()
    if proxy:
        proxy.close()
    save()
    md = markdown(out)
    out_path.with_suffix(".md").write_text(md + "\n")
    print(md)
    if args.min_right is not None and out["strategies"]:
        first = next(iter(out["strategies"].values()))["summary"]
        bad = []
        if first["right"] < args.min_right:
            bad.append(f"fewer than {args.min_right} tasks right ({first['right']}/{first['tasks']})")
        if first["claimed_unmade"] or first["raw_tool_calls"]:
            bad.append(f"{first['claimed_unmade']} answer(s) claim an edit that did not happen and "
                       f"{first['raw_tool_calls']} answer(s) are raw tool calls; both must be 0")
        for b in bad:
            log(b)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
