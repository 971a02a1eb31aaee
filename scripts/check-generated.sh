#!/usr/bin/env bash
# Fails when gen/ (TypeScript), clients/typescript/gen (JavaScript with
# declarations) or clients/go/gen (Go) is not exactly what
# `npm run generate` and `npm run generate:go` produce from proto/.
set -euo pipefail
cd "$(dirname "$0")/.."
npx buf generate
scripts/generate-go.sh
generated=(gen clients/typescript/gen clients/go/gen)
if ! git diff --quiet -- "${generated[@]}" || [ -n "$(git ls-files --others --exclude-standard "${generated[@]}")" ]; then
  echo "generated code is out of date with proto/: run 'npm run generate' and 'npm run generate:go' and commit the result" >&2
  git status --short -- "${generated[@]}" >&2
  exit 1
fi
echo "gen/, clients/typescript/gen and clients/go/gen match proto/"
