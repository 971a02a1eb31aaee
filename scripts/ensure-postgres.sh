#!/usr/bin/env bash
# Checks that PostgreSQL answers at the given URL; starts the local cluster once if it does not.
set -euo pipefail
url="${1:?usage: ensure-postgres.sh <postgres-url>}"
if psql "$url" -qAtc 'select 1' >/dev/null 2>&1; then echo "PostgreSQL answers"; exit 0; fi
if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
  echo "PostgreSQL not answering; starting the local cluster"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do
    psql "$url" -qAtc 'select 1' >/dev/null 2>&1 && { echo "PostgreSQL answers"; exit 0; }
    sleep 1
  done
fi
echo "PostgreSQL is not reachable at $url" >&2
exit 1
