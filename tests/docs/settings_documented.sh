#!/bin/sh
# settings_documented.sh SRCDIR - every setting the code reads is documented.
#
# Users configure openlapi through environment variables and lapirun's
# options; a variable nobody can find is as good as missing.  This lists
# every name the sources hand to an environment reader (getenv and the
# helpers around it: env_size, env_flag, lapi_setting_int, crts_env_size,
# ...), also where a call spans lines, and the names in arrays of
# nothing but such names (crts_job.c's launcher sizes),
# and fails, naming each one, when one appears in no file under docs/
# and not in README.md.  It also wants each of lapirun's long options in
# docs/LAPIRUN.md, and the test hooks (LAPI_*_TEST_*) kept out of
# docs/PROTOCOL.md's table of user settings (they have a list of their
# own, "Test hooks").
set -u
src=${1:?usage: settings_documented.sh SRCDIR}
cd "$src" || exit 2

# Each C file as one line, so that a call broken after "(" still matches.
names=$(
  find src tools fortran -name '*.[ch]' | sort | while read -r f; do
    tr '\n' ' ' <"$f" |
      grep -oE '\b(secure_getenv|getenv|env_[a-z_]+|[a-z_]*setting_[a-z_]+|crts_env_size)[[:space:]]*\([[:space:]]*"[A-Z][A-Z0-9_]*"' |
      sed -E 's/.*"([A-Z0-9_]+)"$/\1/'
    # Arrays of nothing but such names (the launchers' sizes, crts_job.c).
    tr '\n' ' ' <"$f" |
      grep -oE '\[[A-Z0-9_]*\][[:space:]]*=[[:space:]]*\{([[:space:]]*"[A-Z][A-Z0-9]*_[A-Z0-9_]+",?)+[[:space:]]*\}' |
      grep -oE '"[A-Z0-9_]+"' | tr -d '"'
  done | sort -u
)
if [ -z "$names" ]; then
  echo "settings_documented: found no setting in the sources (did the readers change name?)"
  exit 1
fi

missing=0
count=0
for n in $names; do
  count=$((count + 1))
  if ! grep -rqw -- "$n" docs README.md; then
    where=$(grep -rlw -- "$n" src tools fortran | tr '\n' ' ')
    echo "undocumented setting: $n (read in: $where); describe it, its default and meaning, in docs/ (user settings: docs/PROTOCOL.md#settings, docs/LAPI.md, docs/CRTS.md, docs/LAPIRUN.md)"
    missing=$((missing + 1))
  fi
done

# lapirun's long options: {"name", ...} in tools/lapirun/lr_opts.c.
opts=$(grep -oE '\{"[a-z][a-z-]*",' tools/lapirun/lr_opts.c | sed -E 's/\{"(.*)",/\1/')
for o in $opts; do
  count=$((count + 1))
  if ! grep -q -- "--$o\b" docs/LAPIRUN.md; then
    echo "undocumented lapirun option: --$o; add it to the options table in docs/LAPIRUN.md"
    missing=$((missing + 1))
  fi
done

# Test hooks belong below PROTOCOL.md's "### Test hooks", not in the
# user settings table above it.
hooks=$(sed -n '/^## Settings/,/^### Test hooks/p' docs/PROTOCOL.md |
          grep -oE '`[A-Z0-9_]*_TEST_[A-Z0-9_]*`' | sort -u | tr -d '`')
for h in $hooks; do
  echo "test hook among the user settings: $h; move it to the \"### Test hooks\" list of docs/PROTOCOL.md"
  missing=$((missing + 1))
done

if [ "$missing" -gt 0 ]; then
  echo "settings_documented: $missing of $count names need documentation"
  exit 1
fi
echo "settings_documented: all $count settings and lapirun options are documented"
