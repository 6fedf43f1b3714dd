#!/usr/bin/env bash
# `npm run mutation`: Stryker over the pure domain modules (stryker.config.mjs), then the
# per-module check (scripts/mutation-score.ts). Exits non-zero when Stryker fails or any
# module scores below 85 %.
#
#   npm run mutation                       every module in scope (incremental)
#   npm run mutation -- shared/domain/rollout/plan.ts shared/domain/runtime/gc.ts
#                                          only these files
#   npm run mutation -- --changed [BASE]   only the domain files changed since BASE
#                                          (default origin/main), e.g. before a merge
set -uo pipefail
cd "$(dirname "$0")/.."

files=()
if [ "${1:-}" = "--changed" ]; then
  base="${2:-origin/main}"
  while IFS= read -r file; do
    case "$file" in
      shared/domain/runtime/index.ts|shared/domain/runtime/go-types.ts|shared/domain/rollout/types.ts) ;;
      *) [ -f "$file" ] && files+=("$file") ;;
    esac
  done < <(git diff --name-only "$base"...HEAD -- 'shared/domain/runtime/*.ts' 'shared/domain/rollout/*.ts' 'shared/domain/hint-event.ts')
  if [ "${#files[@]}" -eq 0 ]; then
    echo "mutation: no domain file changed since $base"
    exit 0
  fi
elif [ "$#" -gt 0 ]; then
  files=("$@")
fi

args=()
if [ "${#files[@]}" -gt 0 ]; then
  # A narrowed run keeps its own incremental file, so the full run's stays whole.
  args=(--mutate "$(IFS=,; echo "${files[*]}")" --incrementalFile reports/stryker-incremental-files.json)
fi
npx stryker run "${args[@]}"
status=$?
npx tsx scripts/mutation-score.ts || exit 1
exit "$status"
