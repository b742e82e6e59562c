#!/usr/bin/env bash
# scripts/doc-tables.sh --check must fail on a table that differs from `gpulb list --markdown` and
# pass once the script has written it: a miniature tree (the script and a README) checked against
# the real gpulb.  Usage: tests/doc_tables_selftest.sh REPO_ROOT GPULB
set -euo pipefail
root=$1 gpulb=$2
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/scripts" "$tree/docs"
cp "$root/scripts/doc-tables.sh" "$tree/scripts/"
begin=$(sed -n "s/^begin='\(.*\)'$/\1/p" "$root/scripts/doc-tables.sh")
end=$(sed -n "s/^end='\(.*\)'$/\1/p" "$root/scripts/doc-tables.sh")
printf '# A tree\n\n%s\n| policy | a stale row |\n%s\n\nAfter the table.\n' "$begin" "$end" >"$tree/README.md"
if out=$(bash "$tree/scripts/doc-tables.sh" "$gpulb" --check 2>&1); then
  echo "selftest: a stale table passed the check"; exit 1
fi
grep -q 'README.md: its tables differ' <<<"$out" || { echo "selftest: the message does not name the file: $out"; exit 1; }
bash "$tree/scripts/doc-tables.sh" "$gpulb" >/dev/null
bash "$tree/scripts/doc-tables.sh" "$gpulb" --check >/dev/null || { echo "selftest: the written table failed the check"; exit 1; }
grep -q '^| `work-stealing` |' "$tree/README.md" || { echo "selftest: the written table has no work-stealing row"; exit 1; }
grep -q '^After the table.$' "$tree/README.md" || { echo "selftest: the text after the table was lost"; exit 1; }
grep -q 'a stale row' "$tree/README.md" && { echo "selftest: the stale row was kept"; exit 1; }
printf '%s\n| unended |\n' "$begin" >"$tree/docs/broken.md"
if out=$(bash "$tree/scripts/doc-tables.sh" "$gpulb" --check 2>&1); then
  echo "selftest: a table without its end line passed the check"; exit 1
fi
grep -q 'docs/broken.md: a generated table' <<<"$out" || { echo "selftest: the message does not name the broken file: $out"; exit 1; }
echo "selftest: doc-tables refuses a stale table and a table without its end line, and writes one that passes"
