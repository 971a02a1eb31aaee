#!/usr/bin/env bash
# Fails when gen/ is not exactly what `buf generate` produces from proto/.
set -euo pipefail
cd "$(dirname "$0")/.."
npx buf generate
if ! git diff --quiet -- gen || [ -n "$(git ls-files --others --exclude-standard gen)" ]; then
  echo "gen/ is out of date with proto/: run 'npm run generate' and commit the result" >&2
  git status --short -- gen >&2
  exit 1
fi
echo "gen/ matches proto/"
