#!/usr/bin/env bash
# Builds the Debian package of a release binary: /usr/bin/redline, the hardened systemd unit
# (deploy/debian/redline.service), /etc/redline/redline.env (a conffile) and the deployment
# guide. Usage: scripts/package-deb.sh [target/release/redline] [output folder]
# Prints the path of the .deb it wrote.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:-${CARGO_TARGET_DIR:-$root/target}/release/redline}
out=${2:-$root/target/debian}
[ -x "$binary" ] || { echo "package-deb: no binary at $binary (cargo build --release -p redline-app)" >&2; exit 2; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n1)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

install -D -m 0755 "$binary" "$stage/usr/bin/redline"
strip --strip-unneeded "$stage/usr/bin/redline" 2>/dev/null || true
install -D -m 0644 "$root/deploy/debian/redline.service" "$stage/lib/systemd/system/redline.service"
install -D -m 0640 "$root/deploy/debian/redline.env" "$stage/etc/redline/redline.env"
install -D -m 0644 "$root/docs/deploy.md" "$stage/usr/share/doc/redline/deploy.md"
install -D -m 0644 "$root/README.md" "$stage/usr/share/doc/redline/README.md"
mkdir -p "$stage/DEBIAN"
for script in postinst prerm postrm; do
  install -m 0755 "$root/deploy/debian/$script" "$stage/DEBIAN/$script"
done
echo /etc/redline/redline.env > "$stage/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: redline
Version: $version
Architecture: $arch
Maintainer: Redline <support@redline.invalid>
Installed-Size: $size
Depends: libc6, adduser
Recommends: fonts-noto-core
Suggests: postgresql, tesseract-ocr, fonts-noto-cjk
Section: web
Priority: optional
Homepage: https://redline.invalid
Description: AI document editing as an HTTP service
 Redline keeps documents in sessions and lets an AI read and edit them in
 chat, with human review of each change. It serves the HTTP API and the web
 application on the embedded SQLite database with no setup, or as a fleet on
 PostgreSQL and an S3-compatible bucket.
CONTROL
mkdir -p "$out"
deb="$out/redline_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$stage" "$deb" >/dev/null
echo "$deb"
