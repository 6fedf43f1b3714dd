#!/usr/bin/env bash
# Lints the packaged CloudFormation template with AWS's cfn-lint and with checkov.
#
#   scripts/lint-template.sh                    package (npm run -s package), then lint
#   scripts/lint-template.sh --reuse-template   lint the template already in .serverless/
#   scripts/lint-template.sh --template FILE    lint FILE (a JSON template; no packaging)
#
# Passes when cfn-lint reports no error and no warning, and checkov no failed check. A
# warning or check we accept is suppressed in serverless.yml, in the resource's Metadata
# (`cfn-lint: config: ignore_checks`, `checkov: skip: [{id, comment}]`), with its reason;
# docs/operations.md ("Template linters") lists them all. A checkov skip without a comment
# fails the run. Prints one summary line; exits 1 when the template fails, 2 on bad usage.
#
# The linters are installed from PyPI at the versions below into a virtual environment
# outside the repository, created on first use and reused after:
# $TEMPLATE_LINT_VENV, default ${XDG_CACHE_HOME:-$HOME/.cache}/ome-pinning/template-lint/<versions>.
set -euo pipefail
cd "$(dirname "$0")/.."

CFN_LINT_VERSION=1.58.0
CHECKOV_VERSION=3.3.30
# serverless.yml's default region: cfn-lint checks resource types and values against it.
REGION=eu-west-1
PACKAGED_TEMPLATE=.serverless/cloudformation-template-update-stack.json

usage() {
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

template=''
package=true
while [ "$#" -gt 0 ]; do
  case "$1" in
    --reuse-template) package=false; template=$PACKAGED_TEMPLATE ;;
    --template) [ "$#" -ge 2 ] || usage; package=false; template=$2; shift ;;
    -h | --help) usage ;;
    *) echo "lint-template: unknown argument: $1" >&2; usage ;;
  esac
  shift
done

work=$(mktemp -d)
package_lock=''
cleanup() {
  rm -rf "$work"
  [ -z "$package_lock" ] || rm -rf "$package_lock"
}
trap cleanup EXIT

# --- the linters' virtual environment -------------------------------------------------
python=python3
py_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
requirements="cfn-lint==$CFN_LINT_VERSION checkov==$CHECKOV_VERSION"
venv=${TEMPLATE_LINT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ome-pinning/template-lint/cfn-lint-$CFN_LINT_VERSION-checkov-$CHECKOV_VERSION-py$py_version}
venv=$(realpath -m "$venv")
case "$venv/" in
  "$(pwd -P)/"*) echo "lint-template: the virtual environment must be outside the repository: $venv" >&2; exit 2 ;;
esac

ensure_venv() {
  # A marker written after a complete install: an interrupted install is redone, not reused.
  local marker="$venv/.installed"
  if [ "$(cat "$marker" 2>/dev/null)" = "$requirements" ] && "$venv/bin/python" -c '' 2>/dev/null; then
    return
  fi
  if [ -e "$venv" ] && [ ! -e "$venv/pyvenv.cfg" ] && [ -n "$(ls -A "$venv")" ]; then
    echo "lint-template: $venv exists and is not a virtual environment; not touching it" >&2
    exit 2
  fi
  echo "lint-template: installing $requirements into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input $requirements
  printf '%s\n' "$requirements" >"$marker"
}

mkdir -p "$(dirname "$venv")"
# Two runs at once (CI jobs sharing a cache) install once; the second waits, then reuses.
exec 9>"$venv.lock"
flock 9
ensure_venv
flock -u 9

# --- the template ------------------------------------------------------------------------
if $package; then
  # Packaging builds in .serverless/ and .esbuild/; test/packaging/package-service.ts
  # takes this same lock directory, so a test run and this script take turns.
  package_lock="${TMPDIR:-/tmp}"
  package_lock="${package_lock%/}/ome-package-lock-$(printf %s "$(pwd -P)" | sha256sum | cut -c1-12)"
  until mkdir "$package_lock" 2>/dev/null; do
    holder=$(cat "$package_lock/pid" 2>/dev/null || echo 0)
    if [ "${holder:-0}" -gt 0 ] && ! kill -0 "$holder" 2>/dev/null; then rm -rf "$package_lock"; else sleep 0.5; fi
  done
  echo $$ >"$package_lock/pid"
  if ! SLS_TELEMETRY_DISABLED=1 SLS_NOTIFICATIONS_MODE=off npm run -s package >"$work/package.log" 2>&1; then
    cat "$work/package.log" >&2
    echo "lint-template: npm run package failed" >&2
    exit 1
  fi
  rm -rf "$package_lock"
  package_lock=''
  template=$PACKAGED_TEMPLATE
fi
if [ ! -f "$template" ]; then
  echo "lint-template: no template at $template" >&2
  [ "$template" != "$PACKAGED_TEMPLATE" ] || echo "lint-template: run without --reuse-template to package one" >&2
  exit 2
fi

failed=false

# --- cfn-lint ------------------------------------------------------------------------------
# Parseable lines are file:line:column:line:column:RULE:message; the rule's letter is its level.
count_level() { grep -cE ":[0-9]+:[0-9]+:[0-9]+:[0-9]+:$1[0-9]+:" "$2" || true; }

cfn_status=0
"$venv/bin/cfn-lint" --regions "$REGION" --format parseable -- "$template" >"$work/cfn-lint.txt" 2>&1 || cfn_status=$?
cfn_errors=$(count_level E "$work/cfn-lint.txt")
cfn_warnings=$(count_level W "$work/cfn-lint.txt")
if [ "$cfn_status" -ne 0 ]; then
  cat "$work/cfn-lint.txt"
  failed=true
fi

# --- the suppressions ------------------------------------------------------------------------
# Reads them where the linters do, in each resource's Metadata: prints every checkov skip that
# gives no reason, and writes a copy without the cfn-lint suppressions, linted to count what
# they hide. (checkov's report under --quiet leaves the skipped checks out, so the reasons are
# checked here.)
cfn_suppressed='?'
if unreasoned=$("$venv/bin/python" - "$template" "$work/unsuppressed.json" <<'PY'
import json, sys

try:
    with open(sys.argv[1], encoding="utf-8") as source:
        template = json.load(source)
except (OSError, ValueError) as error:
    sys.exit(f"lint-template: cannot read the suppressions of {sys.argv[1]} (a JSON template?): {error}")
for name, resource in (template.get("Resources") or {}).items():
    metadata = resource.get("Metadata") if isinstance(resource, dict) else None
    if not isinstance(metadata, dict):
        continue
    metadata.pop("cfn-lint", None)
    for skip in (metadata.get("checkov") or {}).get("skip") or []:
        if not str(skip.get("comment") or "").strip():
            print(f"{skip.get('id')} on {name}")
with open(sys.argv[2], "w", encoding="utf-8") as target:
    json.dump(template, target)
PY
); then
  "$venv/bin/cfn-lint" --regions "$REGION" --format parseable -- "$work/unsuppressed.json" >"$work/cfn-lint-unsuppressed.txt" 2>&1 || true
  cfn_suppressed=$(($(count_level W "$work/cfn-lint-unsuppressed.txt") - cfn_warnings))
else
  failed=true
fi
while IFS= read -r skip; do
  [ -z "$skip" ] || { echo "lint-template: checkov skip without a reason: $skip" >&2; failed=true; }
done <<<"$unreasoned"

# --- checkov -------------------------------------------------------------------------------
# --skip-download: no call to Prisma Cloud for guidelines; the checks ship with the package.
checkov_status=0
"$venv/bin/checkov" -f "$template" --framework cloudformation --quiet --compact --skip-download \
  -o cli -o json --output-file-path "console,$work/checkov.json" >"$work/checkov.txt" 2>&1 || checkov_status=$?
checkov_counts=$("$venv/bin/python" - "$work/checkov.json" <<'PY' || true
import json, sys

try:
    with open(sys.argv[1], encoding="utf-8") as source:
        report = json.load(source)
except (OSError, ValueError) as error:
    sys.exit(f"lint-template: no checkov report: {error}")
totals = dict(passed=0, failed=0, skipped=0, parsing_errors=0)
for one in report if isinstance(report, list) else [report]:
    summary = one.get("summary", one)
    for key in totals:
        totals[key] += summary.get(key, 0)
print(*totals.values())
PY
)
read -r ck_passed ck_failed ck_skipped ck_parsing_errors <<<"${checkov_counts:-? ? ? ?}"
# A report that checked nothing (no resources read) fails too.
if [ "$checkov_status" -ne 0 ] || [ "$ck_failed" != 0 ] || [ "$ck_parsing_errors" != 0 ] || [ "$ck_passed" = 0 ]; then
  cat "$work/checkov.txt"
  failed=true
fi

echo "cfn-lint: $cfn_errors errors, $cfn_warnings warnings, $cfn_suppressed warnings suppressed; checkov: $ck_passed passed, $ck_failed failed, $ck_skipped skipped"
if $failed; then
  echo "lint-template: $template fails the template linters" >&2
  exit 1
fi
