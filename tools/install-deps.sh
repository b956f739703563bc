#!/bin/sh
# install-deps.sh - install the Debian packages openlapi needs to build and test.
#
# Checks with dpkg-query first and calls apt-get only for what is missing, so
# a second run is quick and touches nothing.  Non-interactive; uses sudo when
# not run as root.  Debian 12 (bookworm) or a close relative is assumed.
set -eu

# slurmd, slurmctld, slurm-client and munge: the tests start jobs with
# Slurm's srun on a cluster of their own, with its own munged (Debian's
# slurmd and slurmctld units wait for an /etc/slurm/slurm.conf that
# nobody writes; where systemd runs, munge's unit starts the system's
# munged, which the tests do not use).
PACKAGES="cmake make gcc g++ gfortran pkg-config libcriterion-dev \
libfabric-dev libfabric-bin iproute2 libpmix-dev openmpi-bin libopenmpi-dev \
slurmd slurmctld slurm-client munge"

missing=""
for pkg in $PACKAGES; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [ "$status" != "installed" ]; then
    missing="$missing $pkg"
  fi
done

if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; install these by hand:$missing" >&2
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "install-deps: not root and no sudo; as root run:" >&2
  echo "  apt-get update && apt-get install -y$missing" >&2
  exit 1
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# sudo drops the environment by default: pass the setting explicitly.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
  --no-install-recommends $missing </dev/null
