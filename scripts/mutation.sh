#!/usr/bin/env bash
# `npm run mutation`: Stryker over the modules in scope (stryker.config.mjs), then the
# per-module check (scripts/mutation-score.ts). Exits non-zero when Stryker fails or any
# module scores below its threshold (85 %; the lease, fence and idempotency group 90 %).
#
#   npm run mutation                       every module in scope, incremental against the
#                                          committed mutation/incremental.json: only the
#                                          mutants of code changed since it was written run
#   npm run mutation -- --full [--resume]  every mutant again, one Stryker run per module
#                                          (scripts/mutation-full.ts); rewrites the incremental
#                                          file and the committed table, mutation/scores.json;
#                                          two test runners (MUTATION_CONCURRENCY), since a
#                                          full run wants an idle machine anyway; --resume
#                                          keeps the module runs finished in mutation/full-run/
#                                          whose mutated files, suite and configuration are
#                                          unchanged (commit that folder to go on elsewhere)
#   npm run mutation -- shared/domain/rollout/plan.ts shared/domain/runtime/gc.ts
#                                          only these files
#   npm run mutation -- --changed [BASE]   only the files in scope changed since BASE
#                                          (default origin/main), e.g. before a merge
set -uo pipefail
cd "$(dirname "$0")/.."

files=()
if [ "${1:-}" = "--full" ]; then
  shift
  exec npx tsx scripts/mutation-full.ts "$@"
elif [ "${1:-}" = "--changed" ]; then
  base="${2:-origin/main}"
  # The scope's patterns as git pathspecs (where `*` also matches `/`).
  mapfile -t scope < <(node -e 'import("./stryker.config.mjs").then((c) => { for (const p of c.default.mutate) if (!p.startsWith("!")) console.log(p.replace("**/", "")); })')
  while IFS= read -r file; do
    case "$file" in
      shared/domain/runtime/index.ts|shared/domain/runtime/go-types.ts|shared/domain/rollout/types.ts) ;;
      *) [ -f "$file" ] && files+=("$file") ;;
    esac
  done < <(git diff --name-only "$base"...HEAD -- "${scope[@]}")
  if [ "${#files[@]}" -eq 0 ]; then
    echo "mutation: no file in scope changed since $base"
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
