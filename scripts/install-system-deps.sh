#!/usr/bin/env bash
# Debian packages the tests use: openssl (certificate oracle). Installs only what is missing.
set -euo pipefail
need=()
command -v openssl >/dev/null || need+=(openssl)
command -v psql >/dev/null || need+=(postgresql-client)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "missing packages: ${need[*]} (install them as root)" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
echo "system packages present: openssl psql"
