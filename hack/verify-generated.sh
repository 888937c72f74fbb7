#!/usr/bin/env bash
# Regenerates code, manifests and the install bundle and fails if that changed
# anything in the working tree, so generated files are never stale
# (committed or not).
set -euo pipefail
cd "$(dirname "$0")/.."
# Everything `make generate` and `make dist` write.
generated=(api config internal/localwebhook/zz_generated.manifests.yaml dist/install.yaml)
snapshot=$(mktemp -d)
trap 'rm -rf "$snapshot"' EXIT
for path in "${generated[@]}"; do
  mkdir -p "$snapshot/$(dirname "$path")"
  if [[ -e $path ]]; then cp -r "$path" "$snapshot/$path"; fi
done
make --no-print-directory generate >/dev/null
make --no-print-directory dist >/dev/null
stale=0
for path in "${generated[@]}"; do
  if ! diff -r "$snapshot/$path" "$path" >/dev/null 2>&1; then
    diff -ru "$snapshot/$path" "$path" || true
    stale=1
  fi
done
if ((stale)); then
  echo "generated files were stale and have been regenerated: review and commit them" >&2
  exit 1
fi
