#!/bin/bash
# Stage 2 of the fabricd QEMU tier: runs inside the guest as PID 1 (tests/vm/init
# switch_roots to it), in the host's root file system (read-only 9p + tmpfs overlay), as
# root, with the host's bash. Powers the guest off when it ends, whatever happens.
# Reads the job that run-vm-tests.sh wrote into the output share (/run/vm/job.sh),
# loads the kernel modules fabricd needs, checks that the kernel really has WireGuard,
# then runs either $VM_CMD or the inner pytest, and leaves its results in /run/vm:
#   status       exit status of the inner command (the host's exit status)
#   output.log   its stdout+stderr (also streamed to the console)
#   junit.xml    pytest's JUnit report (pytest mode only)
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TMPDIR=/tmp
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
export FABRICD_VM=1   # tells tests they run inside the QEMU guest (tests/test_vm.py skips itself)
OUT=/run/vm
up() { cut -d' ' -f1 /proc/uptime; }
status() { echo "$1" > "$OUT/status"; sync; }
# shellcheck disable=SC2317  # (called by the trap)
poweroff_now() {
	echo "VM: T_DONE uptime=$(up)"
	sync
	umount "$OUT" 2> /dev/null
	/bin/busybox poweroff -f 2> /dev/null || poweroff -f 2> /dev/null
	# last resort; should PID 1 exit, the kernel panics (panic=-1: reboot; QEMU -no-reboot exits)
	echo o > /proc/sysrq-trigger
	sleep 10
}
if [ $$ = 1 ]; then
	trap poweroff_now EXIT
	# PID 1 reaps orphans: bash does so whenever it waits, which it does for every command.
fi

# shellcheck source=/dev/null
source "$OUT/job.sh"   # VM_REPO, VM_CMD, VM_BACKEND, VM_TESTS=(), VM_PYTEST_ARGS=()
export FABRICD_WG_BACKEND=$VM_BACKEND   # the integration conftest's default for --fabricd-backend
cd "$VM_REPO" || { echo "VM: FATAL: no $VM_REPO"; exit 1; }
echo "VM: kernel $(uname -r) ($(uname -v))"

# Modules: the host's /lib/modules/<guest kver> is visible through 9p, so kmod resolves
# dependencies itself (a failure only warns: the self-check below decides). Anything else
# (nft expressions, ...) the kernel loads on demand through /sbin/modprobe.
modprobe -a wireguard vxlan bridge veth tun nf_tables || echo "VM: modprobe failed for some module"
ip link set lo up
# a host name, as every real host has: FRR refuses its "(none)", and with it every EVPN apply
hostname fabricd-guest
mods=$(cut -d' ' -f1 /proc/modules | grep -E '^(wireguard|vxlan|bridge|veth|nf_tables)$' | sort)
echo "VM: T_MODS uptime=$(up) modules: ${mods//$'\n'/ }"

# Kernel WireGuard self-check (what --wg-backend kernel relies on).
if ip link add wgchk type wireguard && ip link del wgchk; then
	echo "VM: SELFCHECK kernel-wireguard OK (module $(cat /sys/module/wireguard/version 2> /dev/null))"
else
	echo "VM: SELFCHECK kernel-wireguard FAILED"
	echo "kernel WireGuard self-check failed: ip link add wgchk type wireguard" > "$OUT/output.log"
	status 1
	exit 1
fi

rc=0
if [ -n "${VM_CMD:-}" ]; then
	echo "VM: T_CMD_START uptime=$(up) cmd: $VM_CMD"
	/bin/bash -c "$VM_CMD" 2>&1 | tee "$OUT/output.log"
	rc=${PIPESTATUS[0]}
else
	# Nothing writes into the repository: no cache provider, no bytecode, temp dirs in /tmp.
	args=(-p no:cacheprovider -c tests/pytest.ini --basetemp=/tmp/pytest-vm
		--junitxml="$OUT/junit.xml" -o junit_family=xunit2)
	# --fabricd-backend comes from tests/integration/conftest.py: pytest knows it only when
	# tests/integration is on the command line; for other selections FABRICD_WG_BACKEND
	# (exported above, the option's default) carries the same choice.
	integ=0
	for a in "${VM_TESTS[@]}" "${VM_PYTEST_ARGS[@]}"; do
		case $a in tests/integration* | "$VM_REPO"/tests/integration*) integ=1 ;; esac
	done
	if [ $integ = 1 ] && grep -qs -- '--fabricd-backend' tests/integration/conftest.py; then
		args+=(--fabricd-backend "$VM_BACKEND")
	fi
	echo "VM: T_PYTEST_START uptime=$(up)"
	/usr/bin/python3 -m pytest "${args[@]}" "${VM_TESTS[@]}" "${VM_PYTEST_ARGS[@]}" 2>&1 |
		tee "$OUT/output.log"
	rc=${PIPESTATUS[0]}
fi
echo "VM: T_END uptime=$(up) rc=$rc"
status "$rc"
exit "$rc"
