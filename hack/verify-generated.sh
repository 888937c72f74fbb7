#!/usr/bin/env bash
# Regenerates code and manifests and fails if that changed anything in the
# working tree, so generated files are never stale (committed or not).
set -euo pipefail
cd "$(dirname "$0")/.."
snapshot=$(mktemp -d)
trap 'rm -rf "$snapshot"' EXIT
cp -r api config "$snapshot/"
make --no-print-directory generate >/dev/null
if ! diff -r "$snapshot/api" api >/dev/null || ! diff -r "$snapshot/config" config >/dev/null; then
  diff -ru "$snapshot/api" api || true
  diff -ru "$snapshot/config" config || true
  echo "generated files were stale and have been regenerated: review and commit them" >&2
  exit 1
fi
