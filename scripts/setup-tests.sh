#!/usr/bin/env bash
# Sets up what the tests need on this machine, and says loudly what it could not set up.
# Called by scripts/test.sh; safe to run again (each step is skipped when already done).
#   - PostgreSQL at 127.0.0.1:5432 (trust auth, user postgres, database test): started when
#     installed but stopped; installed from Debian's packages when missing and this is root
#     under CI=true.
#   - cargo-deny and cargo-machete: built from crates.io when missing.
#   - Node.js, npm and Chromium (Debian's packages, when root) for the web app's tests.
#   - poppler-utils (pdftoppm) and tesseract-ocr with tesseract-ocr-eng (Debian's packages,
#     when root) for the scanned-PDF OCR tests.
#   - poppler-utils (pdftotext, pdffonts) and fonts-noto-cjk (Debian's packages, when root) for
#     the PDF export's mixed-script test (crates/export/tests/pdf_scripts.rs).
#   - pandoc and LibreOffice Writer and Draw with its Python bridge python3-uno (Debian's
#     packages, when root): readers of the DOCX exports (scripts/lo-revisions.py accepts and
#     rejects a tracked DOCX's revisions); LibreOffice opens every DOCX and PDF export of the corpus (Draw imports
#     the PDFs; crates/export/tests/export/corpus.rs).
#   - HAProxy (Debian's package, when root) for the load-balancer tests
#     (crates/app/tests/api/balancer.rs, running deploy/haproxy/redline.cfg).
#   - .venv: Python packages of the tests (moto, an S3-compatible server for the blob store
#     tests; python-docx, a reader of the DOCX exports; schemathesis and openapi-python-client
#     for the OpenAPI checks; requests for the evaluation of the editing loop, scripts/eval)
#     and, when the conformance suite is present, its requirements.
# Under CI=true anything missing is a failure; elsewhere it is a warning and the tests that
# need it say they were skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ci=${CI:-false}
missing=()

say() { printf '   setup: %s\n' "$*"; }
warn() { printf '\n!! setup: %s\n\n' "$*" >&2; missing+=("$1"); }
as_root() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }
apt_updated=false
apt_install() {
  $apt_updated || { apt-get update -qq; apt_updated=true; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# --- PostgreSQL ----------------------------------------------------------------------------
pg_up() { command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; }
if ! pg_up; then
  if [ ! -d /etc/postgresql ] && [ "$ci" = true ] && as_root; then
    say "installing PostgreSQL from Debian's packages"
    apt_install postgresql
    version=$(ls /etc/postgresql | head -n1)
    hba=/etc/postgresql/$version/main/pg_hba.conf
    # The tests connect as postgres over loopback without a password.
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  fi
  if [ -d /etc/postgresql ]; then
    say "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start 2>/dev/null || true
    for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  fi
fi
if pg_up; then
  # The storage tests' admin connection names the database `test`.
  psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" 2>/dev/null | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -d postgres -qc 'CREATE DATABASE test' 2>/dev/null || true
  say "PostgreSQL is reachable at 127.0.0.1:5432"
else
  warn "PostgreSQL is not reachable at 127.0.0.1:5432: install it (apt-get install postgresql, trust auth for 127.0.0.1) or start it; the PostgreSQL half of the storage tests is skipped"
fi

# --- Cargo tools ---------------------------------------------------------------------------
for tool in cargo-deny cargo-machete; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    say "building $tool from crates.io (once)"
    cargo install --locked --quiet "$tool" || warn "$tool could not be installed (cargo install --locked $tool)"
  fi
done

# --- The web app's browser tests: Node.js and npm, Debian's Chromium --------------------------
if ! command -v npm >/dev/null 2>&1; then
  if as_root; then say "installing Node.js and npm from Debian's packages"; apt_install nodejs npm; fi
  command -v npm >/dev/null 2>&1 || warn "npm is missing: install Node.js and npm; the web app's type check and browser tests are skipped"
fi
if [ ! -x /usr/bin/chromium ]; then
  if as_root; then say "installing Chromium from Debian's packages"; apt_install chromium; fi
  [ -x /usr/bin/chromium ] || warn "Chromium is missing at /usr/bin/chromium (apt-get install chromium): the web app's browser tests are skipped"
fi

# --- The package test: curl (dpkg and adduser come with Debian) -------------------------------
if ! command -v curl >/dev/null 2>&1; then
  if as_root; then say "installing curl from Debian's packages"; apt_install curl; fi
  command -v curl >/dev/null 2>&1 || warn "curl is missing: the Debian package test is skipped"
fi

# --- Scanned PDFs: poppler's pdftoppm renders a page, Tesseract reads it -----------------------
if ! command -v pdftoppm >/dev/null 2>&1; then
  if as_root; then say "installing poppler-utils from Debian's packages"; apt_install poppler-utils; fi
  command -v pdftoppm >/dev/null 2>&1 || warn "pdftoppm is missing (apt-get install poppler-utils): the scanned-PDF OCR tests are skipped"
fi
if ! command -v tesseract >/dev/null 2>&1 || ! tesseract --list-langs 2>/dev/null | grep -qx eng; then
  if as_root; then say "installing Tesseract (English) from Debian's packages"; apt_install tesseract-ocr tesseract-ocr-eng; fi
  tesseract --list-langs 2>/dev/null | grep -qx eng \
    || warn "tesseract with English is missing (apt-get install tesseract-ocr tesseract-ocr-eng): the scanned-PDF OCR tests are skipped"
fi

# --- The PDF export's mixed-script test: poppler-utils, fonts-noto-cjk --------------------------
cjk_font=/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
if ! command -v pdftotext >/dev/null 2>&1 || ! command -v pdffonts >/dev/null 2>&1 || [ ! -f "$cjk_font" ]; then
  if as_root; then say "installing poppler-utils and fonts-noto-cjk from Debian's packages"; apt_install poppler-utils fonts-noto-cjk; fi
  { command -v pdftotext >/dev/null 2>&1 && command -v pdffonts >/dev/null 2>&1 && [ -f "$cjk_font" ]; } \
    || warn "poppler-utils or fonts-noto-cjk is missing (apt-get install poppler-utils fonts-noto-cjk): the PDF export's mixed-script test is skipped"
fi

# --- Document readers that judge the exports (crates/export/tests/readers.rs) ---------------
if ! command -v pandoc >/dev/null 2>&1; then
  if as_root; then say "installing pandoc from Debian's packages"; apt_install pandoc; fi
  command -v pandoc >/dev/null 2>&1 || warn "pandoc is missing (apt-get install pandoc): the DOCX reader checks are skipped"
fi
# Draw's registry beside the soffice program: LibreOffice's PDF import needs Draw.
lo_draw() {
  local soffice
  soffice=$(command -v soffice 2>/dev/null) || return 1
  [ -f "$(dirname "$(readlink -f "$soffice")")/../share/.registry/draw.xcd" ]
}
if ! command -v soffice >/dev/null 2>&1 || ! lo_draw; then
  if as_root; then say "installing LibreOffice Writer and Draw from Debian's packages"; apt_install libreoffice-writer-nogui libreoffice-draw-nogui; fi
  command -v soffice >/dev/null 2>&1 && lo_draw \
    || warn "LibreOffice Writer or Draw is missing (apt-get install libreoffice-writer-nogui libreoffice-draw-nogui): the DOCX opening check and the corpus exports' LibreOffice check are skipped"
fi
# LibreOffice's Python bridge: scripts/lo-revisions.py accepts and rejects tracked changes.
if ! /usr/bin/python3 -c 'import uno' >/dev/null 2>&1; then
  if as_root; then say "installing LibreOffice's Python bridge from Debian's packages"; apt_install python3-uno; fi
  /usr/bin/python3 -c 'import uno' >/dev/null 2>&1 \
    || warn "python3-uno is missing (apt-get install python3-uno): LibreOffice's accept-all / reject-all checks of tracked DOCX exports are skipped"
fi

# --- The load-balancer tests: HAProxy in front of three replicas ----------------------------
if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then
  if as_root; then say "installing HAProxy from Debian's packages"; apt_install haproxy; fi
  { command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; } \
    || warn "haproxy is missing (apt-get install haproxy): the load-balancer tests are skipped"
fi

# --- Python --------------------------------------------------------------------------------
if ! command -v python3 >/dev/null 2>&1 && as_root; then
  say "installing Python 3"; apt_install python3 python3-venv
fi
if command -v python3 >/dev/null 2>&1; then
  if [ ! -x .venv/bin/pip ]; then
    python3 -m venv .venv 2>/dev/null || { rm -rf .venv; as_root && apt_install python3-venv && python3 -m venv .venv; } \
      || warn "python3 -m venv failed: install python3-venv"
  fi
  if [ -x .venv/bin/pip ]; then
    pip=(.venv/bin/pip install --quiet --disable-pip-version-check)
    for requirements in scripts/requirements-tests.txt scripts/requirements-openapi.txt scripts/eval/requirements.txt; do
      "${pip[@]}" -r "$requirements" || warn "pip could not install $requirements"
    done
    suite=${REDLINE_CONFORMANCE_DIR:-$root/../shared/conformance}
    # Always asked (a quick no-op when satisfied): another tool may have brought pytest alone.
    if [ -f "$suite/requirements.txt" ]; then
      "${pip[@]}" -r "$suite/requirements.txt" || warn "pip could not install the conformance suite's requirements"
    fi
  fi
else
  warn "python3 is missing: the S3 blob store tests (moto) and the conformance suite cannot run"
fi

if [ ${#missing[@]} -gt 0 ] && [ "$ci" = true ]; then
  echo "setup: under CI=true nothing may be missing (${#missing[@]} problem(s) above)" >&2
  exit 1
fi
