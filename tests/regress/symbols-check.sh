#!/bin/sh
# symbols-check ABICHECK LIBEXTSEM LIST
# The shim's exported symbols (NAME@@NODE, sorted) must equal the checked-in
# list: a new export, a dropped one or a changed version node is an ABI
# change to review (update shim/libextsem.symbols on purpose).
set -eu
abicheck=$1 lib=$2 list=$3
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$abicheck" --symbols "$lib" >"$tmp"
if ! diff -u "$list" "$tmp"; then
	echo "symbols-check: $lib exports differ from $list (- expected, + built)" >&2
	exit 1
fi
echo "symbols-check: $(wc -l <"$tmp") exports match $list"
