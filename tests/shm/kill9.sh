#!/bin/sh
# A rank killed with SIGKILL while node regions exist must leave nothing in /dev/shm.
# Usage: kill9.sh <launcher> <flags...> <path of mcoll-shm>  (the script appends "kill")
before=$(ls /dev/shm | grep -c '^mcoll' || true)
"$@" kill >/dev/null 2>&1
after=$(ls /dev/shm | grep -c '^mcoll' || true)
if [ "$after" -gt "$before" ]; then
  echo "FAIL: /dev/shm gained mcoll entries after kill -9:"; ls -la /dev/shm | grep mcoll
  exit 1
fi
echo "PASSED: no /dev/shm entry left ($before before, $after after)"
