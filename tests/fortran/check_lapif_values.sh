#!/bin/bash
# check_lapif_values.sh CC SRCDIR - lapif.h against lapi.h.
#
# Every INTEGER PARAMETER of fortran/lapif.h must have the value of the
# name in include/lapi.h (a macro or an enumerator): each becomes a
# _Static_assert compiled against lapi.h, so a wrong value or a name C
# does not know fails.  And every error code, query, vector type, RMW
# operation and lapi_lib_t value of lapi.h must be in lapif.h.
set -euo pipefail

cc=${1:?usage: check_lapif_values.sh CC SRCDIR}
src=${2:?usage: check_lapif_values.sh CC SRCDIR}
lapif=$src/fortran/lapif.h
lapih=$src/include/lapi.h
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lapif-values.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# "      INTEGER, PARAMETER :: NAME = VALUE": default INTEGER (C int);
# "      PARAMETER (NAME = DIGITS_KIND)": an INTEGER(KIND=...) (long long).
sed -n -E 's/^ +INTEGER, PARAMETER :: ([A-Z0-9_]+) = ([-0-9 ]+)$/int \1 \2/p' \
  "$lapif" >"$tmp/params"
sed -n -E 's/^ +PARAMETER \(([A-Z0-9_]+) = ([0-9]+)_[A-Z_]+\)$/ll \1 \2/p' \
  "$lapif" >>"$tmp/params"
count=$(wc -l <"$tmp/params")
if [ "$count" -lt 250 ]; then
  echo "only $count PARAMETERs read from $lapif: has its layout changed?"
  exit 1
fi

{
  echo '#include <lapi.h>'
  while read -r kind name value; do
    if [ "$kind" = int ]; then
      echo "_Static_assert((int)($name) == ($value), \"$name\");"
    else
      echo "_Static_assert((long long)($name) == ${value}LL, \"$name\");"
    fi
  done <"$tmp/params"
} >"$tmp/values.c"
if ! "$cc" -fsyntax-only -std=c11 -I"$src/include" "$tmp/values.c" \
    2>"$tmp/cc.log"; then
  echo "lapif.h and lapi.h disagree:"
  grep -E "error" "$tmp/cc.log" | head -20
  exit 1
fi

# Names C has and Fortran must have: the error codes (macros), and the
# enumerators of the queries, vector types, RMW operations, library levels.
{
  sed -n -E 's/^#define (LAPI_(ERR|ATT|WARN)_[A-Z0-9_]+) +\(.*/\1/p' "$lapih"
  for e in lapi_query_t RMW_ops_t lapi_vectype_t lapi_lib_t; do
    awk -v e="$e" '
      /typedef enum/ { inside = 1; n = 0; next }
      inside && /^}/ { if ($0 ~ ("} *" e ";")) for (i = 0; i < n; i++) print names[i];
                       inside = 0; next }
      inside { line = $0; sub(/\/\*.*/, "", line)
               while (match(line, /[A-Z][A-Z0-9_]+/)) {
                 names[n++] = substr(line, RSTART, RLENGTH)
                 line = substr(line, RSTART + RLENGTH)
               } }' "$lapih"
  done
} | sort -u >"$tmp/c_names"
cut -d' ' -f2 "$tmp/params" | sort -u >"$tmp/f_names"
missing=$(comm -23 "$tmp/c_names" "$tmp/f_names")
if [ -n "$missing" ]; then
  echo "in lapi.h but not in lapif.h:" $missing
  exit 1
fi
echo "fortran_lapif_values: $count PARAMETERs match lapi.h; " \
  "$(wc -l <"$tmp/c_names") C names all present"
