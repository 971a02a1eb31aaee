#!/usr/bin/env bash
# Debian packages the tests use: openssl (certificate oracle), the PostgreSQL
# client, and Chromium (browser tests through playwright-core). Installs only
# what is missing; needs root (or the packages already present).
set -euo pipefail
need=()
command -v openssl >/dev/null || need+=(openssl)
command -v psql >/dev/null || need+=(postgresql-client)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "missing packages: ${need[*]} (install them as root)" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
echo "system packages present: openssl psql chromium"
