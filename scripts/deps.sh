#!/usr/bin/env bash
# Installs the Debian packages mcoll needs, when missing. As non-root it prints the command.
set -euo pipefail
pkgs=(build-essential cmake pkg-config gfortran libopenmpi-dev openmpi-bin libmpich-dev mpich
      libhwloc-dev libjansson-dev gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "mcoll needs these Debian packages; run as root:" >&2
  echo "  apt-get update && $cmd" >&2
  exit 1
fi
echo "mcoll: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Both MPIs register the generic mpicc/mpiexec alternatives; mcoll always names the
# implementation explicitly (mpicc.openmpi, mpicc.mpich), so the choice does not matter.
