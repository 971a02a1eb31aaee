#!/usr/bin/env bash
# Regenerates the Go client code in clients/go/gen from proto/ (buf.gen.go.yaml:
# protobuf messages and gRPC stubs, committed). Where protoc-gen-connect-go is
# on PATH it also writes connect-go stubs (buf.gen.connect-go.yaml), which are
# not committed: they need connectrpc.com/connect, which an offline build
# cannot fetch. See docs/clients.md.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
for plugin in protoc-gen-go protoc-gen-go-grpc; do
  command -v "$plugin" >/dev/null || missing+=("$plugin")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "missing code generators: ${missing[*]} (Debian packages of the same names, installed by" >&2
  echo "scripts/install-system-deps.sh; the committed code is made with those versions)" >&2
  exit 1
fi
npx buf generate --template buf.gen.go.yaml
if command -v protoc-gen-connect-go >/dev/null; then
  npx buf generate --template buf.gen.connect-go.yaml
  echo "connect-go stubs written under clients/go/gen (not committed; see docs/clients.md)"
fi
