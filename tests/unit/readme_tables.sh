#!/bin/sh
# README's variables and algorithms tables are `mcoll-info --vars|--algs --markdown`, row for
# row in the same order: a description changed in src/core/config.c or in an algorithm's
# registration (its .doc) must be changed in README too, and the other way round.
#   readme_tables.sh MCOLL-INFO README.md
info=$1 readme=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
for part in vars algs; do
  "$info" --$part --markdown | sed '/^$/d' > "$tmp/$part.want" || { echo "FAIL: mcoll-info --$part"; exit 1; }
  # README's table: from the generated header line to the first blank line after it
  awk -v h="$(head -n 1 "$tmp/$part.want")" '$0 == h { on = 1 } on && !NF { exit } on' "$readme" > "$tmp/$part.have"
  if ! diff -u "$tmp/$part.have" "$tmp/$part.want" > "$tmp/$part.diff"; then
    echo "FAIL: README's $part table differs from mcoll-info --$part --markdown (- README, + mcoll-info):"
    cat "$tmp/$part.diff"
    status=1
  fi
done
[ $status = 0 ] && echo "README tables match mcoll-info"
exit $status
