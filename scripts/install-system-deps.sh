#!/usr/bin/env bash
# Debian packages the tests use: openssl (certificate oracle), the PostgreSQL
# client, Chromium (browser tests through playwright-core) with a Japanese font
# (fonts-noto-cjk, so screenshots of the Japanese pages show text), and Go with the
# protobuf and gRPC libraries and code generators (the Go client in
# clients/go is built offline, in GOPATH mode, from /usr/share/gocode).
# Installs only what is missing, with apt-get as root.
#
# --if-possible (used by `npm test`): where packages cannot be installed (not
# root, no apt-get), say so and go on; the tests that need them then skip with
# a message, or fail under CI=true.
set -euo pipefail
lenient=false
[ "${1:-}" = "--if-possible" ] && lenient=true
need=()
command -v openssl >/dev/null || need+=(openssl)
command -v psql >/dev/null || need+=(postgresql-client)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -d /usr/share/fonts/opentype/noto ] && ls /usr/share/fonts/opentype/noto | grep -q CJK || need+=(fonts-noto-cjk)
command -v go >/dev/null || need+=(golang-go)
[ -d /usr/share/gocode/src/google.golang.org/grpc ] || need+=(golang-google-grpc-dev)
[ -d /usr/share/gocode/src/google.golang.org/protobuf ] || need+=(golang-google-protobuf-dev)
[ -d /usr/share/gocode/src/google.golang.org/genproto ] || need+=(golang-google-genproto-dev)
command -v protoc-gen-go >/dev/null || need+=(protoc-gen-go)
command -v protoc-gen-go-grpc >/dev/null || need+=(protoc-gen-go-grpc)
if [ ${#need[@]} -eq 0 ]; then
  $lenient || echo "system packages present: openssl psql chromium go (gRPC, protobuf, protoc-gen-go, protoc-gen-go-grpc)"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "missing packages: ${need[*]} (install them as root with apt-get)" >&2
  $lenient && exit 0
  exit 1
fi
echo "installing ${need[*]} (once)…"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
echo "system packages present: openssl psql chromium go (gRPC, protobuf, protoc-gen-go, protoc-gen-go-grpc)"
