#!/usr/bin/env bash
# scripts/check-format.sh on a miniature tree: a file off the style is named (exit 1); --fix
# formats it, and the check then passes. Exit 77 (skip) where clang-format is not release 14.
set -uo pipefail
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/.clang-format" "$tmp/"
printf 'int  main( ){return 0;}\n' >"$tmp/bad.cpp"
out=$(bash "$root/scripts/check-format.sh" "$tmp" 2>&1)
rc=$?
[ $rc -eq 77 ] && { echo "$out"; exit 77; }
[ $rc -eq 1 ] || { echo "FAIL: a misformatted file: exit $rc, expected 1: $out"; exit 1; }
grep -q 'bad.cpp' <<<"$out" || { echo "FAIL: the file is not named: $out"; exit 1; }
bash "$root/scripts/check-format.sh" "$tmp" --fix >/dev/null || { echo "FAIL: --fix failed"; exit 1; }
out=$(bash "$root/scripts/check-format.sh" "$tmp" 2>&1) || { echo "FAIL: after --fix: $out"; exit 1; }
echo "misformatted file named, then formatted: $out"
