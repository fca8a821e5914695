#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-vm-tests.sh - the kernel-WireGuard tier of fabricd's tests: run the pytest
# integration scenarios inside a QEMU guest that boots Debian's stock kernel (which has
# wireguard.ko; the kernel of the build machines may not).
#
# Usage: tests/vm/run-vm-tests.sh [PYTEST ARGS...]        e.g.  -m wireguard  -k mtu  -x
#        tests/vm/run-vm-tests.sh tests/integration/test_apply_mtu.py -x   (paths: only those)
#        VM_CMD='wg --version; ip -br link' tests/vm/run-vm-tests.sh   (any command instead)
#
# Design (boot chain):
#   host:   QEMU in software emulation (TCG; /dev/kvm is not usable here), no NIC at all,
#           booting the uncompressed vmlinux of the newest Debian generic -amd64 kernel in
#           /lib/modules that has wireguard.ko, through its PVH entry (no decompression in
#           the guest), with a ~1 MB initramfs: static busybox + tests/vm/init + the .ko
#           files of virtio-pci, 9p and overlayfs (built into tests/vm/work/, cached by a
#           hash of its inputs). Two virtio-9p shares:
#             hostroot  the host's "/" READ-ONLY  (so the guest has python3, pytest, ip, wg,
#                       tcpdump, nft, wireguard-go, this build tree, /lib/modules: nothing
#                       is copied)
#             vmout     tests/vm/work/out, writable: the job in, the results out.
#   stage 1 (tests/vm/init, PID 1, busybox): insmod virtio/9p/overlay, mount hostroot,
#           overlayfs with a tmpfs upper over it (the guest may write anywhere; nothing
#           reaches the host), fresh proc/sys/dev/run/tmp, vmout at /run/vm, then
#           switch_root into it (not chroot: see the comment in tests/vm/init).
#   stage 2 (tests/vm/guest.sh, the host's bash as PID 1, powers the guest off at the end):
#           modprobe wireguard, vxlan, bridge, veth, tun, nf_tables (kmod and the host's
#           /lib/modules/<kver> do the rest); self-check "ip link add wgchk type wireguard";
#           then /usr/bin/python3 -m pytest -p no:cacheprovider -c tests/pytest.ini
#           $VM_TESTS --fabricd-backend auto [PYTEST ARGS] (or $VM_CMD), writing
#           /run/vm/{output.log,junit.xml,status}.
#   host:   streams the console to tests/vm/work/console.log (and stdout unless
#           VM_QUIET=1), kills QEMU by PID after VM_TIMEOUT, prints the timings and the
#           inner pytest summary, and exits with the inner status (1 if the guest never
#           reported one).
#
# Environment:
#   VM_TESTS     inner pytest paths, relative to the repo (default: the paths among the
#                arguments, else "tests/vm/test_guest_smoke.py tests/integration")
#   VM_CMD       run this (bash -c) in the guest instead of pytest
#   VM_BACKEND   --fabricd-backend for the scenarios (default auto: kernel WireGuard)
#   VM_TIMEOUT   seconds for the whole boot (default 1200)
#   VM_MEM, VM_SMP   guest memory in MB (default 2048) and CPUs (default 2)
#   VM_CPU       QEMU -cpu model (default max)
#   VM_KVER      guest kernel version (default: newest /lib/modules/*-amd64 with wireguard.ko)
#   VM_QUIET=1   print only the VM: marker lines of the console, not all of it
#   VM_APPEND    extra kernel command line
# Results: tests/vm/work/out/{junit.xml,output.log,status}, tests/vm/work/console.log.
# Needs (Debian 12): qemu-system-x86 linux-image-amd64 busybox-static cpio (see
# scripts/install-deps.sh); fabricd itself is built by "make" (make vmcheck does both).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/../.." && pwd -P)
WORK=$HERE/work
OUT=$WORK/out
CONSOLE=$WORK/console.log
VM_TIMEOUT=${VM_TIMEOUT:-1200}
VM_MEM=${VM_MEM:-2048}
VM_SMP=${VM_SMP:-2}
VM_QUIET=${VM_QUIET:-0}
# The guest sees the host's file system at the same paths, so test paths given on the
# command line (relative to the caller's directory) are passed on made absolute; if
# there are any, they replace the default selection.
PYARGS=()
paths=0
prev=''
for a in "$@"; do
	p=${a%%::*}
	case $prev in
		-m | -k | -o | -p | -c | -W | --deselect | --ignore | --ignore-glob | --basetemp | \
			--junitxml | --rootdir | --fabricd-backend | --durations) ;;
		*)
			if [[ $a != -* ]] && [ -e "$p" ]; then
				a=$(realpath "$p")${a#"$p"}
				paths=1
			fi
			;;
	esac
	PYARGS+=("$a")
	prev=$a
done
if [ -n "${VM_TESTS:-}" ] || [ "$paths" = 0 ]; then
	read -r -a VM_TESTS_A <<< "${VM_TESTS:-tests/vm/test_guest_smoke.py tests/integration}"
else
	VM_TESTS_A=()
fi
# Modules the initramfs carries (dependencies are added): the 9p transport and overlayfs,
# everything else is loaded from the host's /lib/modules after switch_root.
INITRD_MODULES="virtio_pci 9pnet_virtio 9p overlay"

say() { printf 'run-vm-tests: %s\n' "$*"; }
die() { say "ERROR: $*" >&2; exit 1; }
now() { printf '%s' "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

QEMU=$(command -v qemu-system-x86_64 || true)
[ -n "$QEMU" ] || die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
BUSYBOX=''
for b in /bin/busybox /usr/bin/busybox; do   # must be static: the initramfs has no libc
	if [ -x "$b" ] && [[ $(LC_ALL=C ldd "$b" 2>&1 || true) == *"not a dynamic executable"* ]]; then
		BUSYBOX=$b
		break
	fi
done
[ -n "$BUSYBOX" ] || die "a static busybox is needed (apt-get install busybox-static)"
command -v cpio > /dev/null || die "cpio not found (apt-get install cpio)"
case $REPO in *[[:space:]]*) die "the repository path must not contain white space: $REPO" ;; esac

# --- the guest kernel: Debian's generic flavour (not -rt/-cloud), with wireguard.ko -------
if [ -z "${VM_KVER:-}" ]; then
	VM_KVER=$(for d in /lib/modules/*-amd64; do
		k=${d##*/}
		[[ $k =~ ^[0-9.]+-[0-9]+-amd64$ ]] || continue
		[ -r "/boot/vmlinuz-$k" ] || continue
		compgen -G "$d/kernel/drivers/net/wireguard/wireguard.ko*" > /dev/null && echo "$k"
	done | sort -V | tail -n 1 || true)
fi
[ -n "$VM_KVER" ] ||
	die "no Debian -amd64 kernel with wireguard.ko in /lib/modules (apt-get install linux-image-amd64)"
KERNEL=/boot/vmlinuz-$VM_KVER
[ -r "$KERNEL" ] || die "no $KERNEL"

QPID='' FPID='' FIFO='' TMPD=''
# shellcheck disable=SC2317  # (called by the trap)
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$QPID" ] && kill -0 "$QPID" 2> /dev/null; then
		kill -TERM "$QPID" 2> /dev/null || true
		sleep 1
		kill -KILL "$QPID" 2> /dev/null || true
	fi
	if [ -n "$FPID" ]; then
		kill "$FPID" 2> /dev/null || true
		wait "$FPID" 2> /dev/null || true
	fi
	[ -z "$FIFO" ] || rm -f "$FIFO"
	[ -z "$TMPD" ] || rm -rf "$TMPD"
	exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

mkdir -p "$WORK"
# One run at a time per tree: the runs share tests/vm/work/{out,console.log}.
exec 9> "$WORK/lock"
if ! flock -n 9; then
	say "another run-vm-tests.sh holds $WORK/lock; waiting"
	flock -w "$VM_TIMEOUT" 9 || die "still locked after ${VM_TIMEOUT}s"
fi
TMPD=$(mktemp -d "$WORK/tmp.XXXXXX")

# --- initramfs (cached by a hash of everything that goes into it) ------------------------
mapfile -t KOS < <(for m in $INITRD_MODULES; do modprobe -S "$VM_KVER" --show-depends "$m"; done |
	awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++')
[ "${#KOS[@]}" -gt 0 ] || die "modprobe -S $VM_KVER --show-depends found no modules"
KEY=$( {
	echo "recipe 2 $VM_KVER"
	sha256sum "$HERE/init" "$BUSYBOX"
	for k in "${KOS[@]}"; do stat -L -c '%n %s %Y' "$k"; done
} | sha256sum | cut -c1-16)
INITRD=$WORK/initrd-$VM_KVER-$KEY.cpio.gz
if [ ! -s "$INITRD" ]; then
	R=$TMPD/root
	mkdir -p "$R"/{bin,sbin,proc,sys,dev,mod,newroot}
	cp "$BUSYBOX" "$R/bin/busybox"
	for a in $("$R/bin/busybox" --list); do
		[ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"
	done
	: > "$R/mod/order"
	for k in "${KOS[@]}"; do
		b=${k##*/}
		case $k in
			*.xz) xz -dc "$k" > "$R/mod/${b%.xz}"; b=${b%.xz} ;;
			*.zst) zstd -dcq "$k" > "$R/mod/${b%.zst}"; b=${b%.zst} ;;
			*) cp "$k" "$R/mod/$b" ;;
		esac
		echo "$b" >> "$R/mod/order"
	done
	install -m 0755 "$HERE/init" "$R/init"
	rm -f "$WORK"/initrd-*.cpio.gz
	(cd "$R" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1) > "$TMPD/initrd"
	mv "$TMPD/initrd" "$INITRD"
	say "built ${INITRD##*/} ($(du -k "$INITRD" | cut -f1) KiB;" \
		"modules: $(tr '\n' ' ' < "$R/mod/order"))"
fi

# --- the uncompressed vmlinux: Debian's kernel has CONFIG_PVH=y, so QEMU boots the ELF ---
# directly and the guest skips the slow (under TCG) xz decompression. Falls back to bzImage.
KKEY=$(stat -L -c '%s %Y' "$KERNEL" | sha256sum | cut -c1-12)
BOOTK=$WORK/vmlinux-$VM_KVER-$KKEY
if [ ! -s "$BOOTK" ]; then
	rm -f "$WORK"/vmlinux-*
	if /usr/bin/python3 - "$KERNEL" "$TMPD/vmlinux" << 'PY'; then
import lzma, sys
d = open(sys.argv[1], 'rb').read()
off = d.find(b'\xfd7zXZ\x00')
if off < 0:
    sys.exit(1)
v = lzma.LZMADecompressor().decompress(d[off:])
if v[:4] != b'\x7fELF':
    sys.exit(1)
open(sys.argv[2], 'wb').write(v)
PY
		mv "$TMPD/vmlinux" "$BOOTK"
	else
		say "could not extract vmlinux from $KERNEL; booting the bzImage (slower)"
		BOOTK=$KERNEL
	fi
fi

# --- the job, through the writable share --------------------------------------------------
rm -rf "$OUT"
mkdir -p "$OUT"
printf '%s\n' "$REPO" > "$OUT/repo"
{
	printf 'VM_REPO=%q\n' "$REPO"
	printf 'VM_CMD=%q\n' "${VM_CMD:-}"
	printf 'VM_BACKEND=%q\n' "${VM_BACKEND:-auto}"
	printf 'VM_TESTS=('; [ ${#VM_TESTS_A[@]} -eq 0 ] || printf '%q ' "${VM_TESTS_A[@]}"; printf ')\n'
	printf 'VM_PYTEST_ARGS=('; [ ${#PYARGS[@]} -eq 0 ] || printf '%q ' "${PYARGS[@]}"; printf ')\n'
} > "$OUT/job.sh"

# --- boot ----------------------------------------------------------------------------------
FIFO=$TMPD/console.fifo
mkfifo "$FIFO"
# Console filter: keep a clean copy (no CR) and note when the inner command starts.
(
	exec 3> "$CONSOLE"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line//$'\r'/}
		printf '%s\n' "$line" >&3
		case $line in
			*"VM: T_PYTEST_START"* | *"VM: T_CMD_START"*) now > "$TMPD/t_start" ;;
		esac
		if [ "$VM_QUIET" != 1 ] || [[ $line == *"VM: "* ]]; then
			printf '%s\n' "$line"
		fi
	done < "$FIFO"
) &
FPID=$!

APPEND="console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init 8250.nr_uarts=1 ${VM_APPEND:-}"
say "booting Linux $VM_KVER under QEMU TCG (mem ${VM_MEM}M, smp $VM_SMP, timeout ${VM_TIMEOUT}s)"
T0=$(now)
"$QEMU" -M q35 -accel tcg,thread=multi -cpu "${VM_CPU:-max}" -m "$VM_MEM" -smp "$VM_SMP" \
	-nodefaults -no-user-config -display none -vga none -nic none -no-reboot \
	-serial stdio -monitor none \
	-kernel "$BOOTK" -initrd "$INITRD" -append "$APPEND" \
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=vmout,path="$OUT",security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=vmout,mount_tag=vmout \
	< /dev/null > "$FIFO" 2>&1 &
QPID=$!

deadline=$((EPOCHSECONDS + VM_TIMEOUT))
timed_out=0
while kill -0 "$QPID" 2> /dev/null; do
	if [ "$EPOCHSECONDS" -ge "$deadline" ]; then
		say "TIMEOUT after ${VM_TIMEOUT}s: killing QEMU (pid $QPID)"
		kill -TERM "$QPID" 2> /dev/null || true
		sleep 2
		kill -KILL "$QPID" 2> /dev/null || true
		timed_out=1
		break
	fi
	sleep 0.2
done
qrc=0
wait "$QPID" || qrc=$?
QPID=''
T1=$(now)
wait "$FPID" || true
FPID=''

# --- report --------------------------------------------------------------------------------
rc=1
if [ -s "$OUT/status" ] && read -r st < "$OUT/status" && [[ $st =~ ^[0-9]+$ ]]; then
	rc=$st
	reported=1
else
	reported=0
fi

echo
say "timings (host wall clock):"
if [ -s "$TMPD/t_start" ]; then
	what=pytest
	[ -z "${VM_CMD:-}" ] || what=VM_CMD
	say "  qemu start -> guest $what start: $(secs "$T0" "$(cat "$TMPD/t_start")") s"
fi
say "  qemu start -> qemu exit: $(secs "$T0" "$T1") s"
grep -E 'VM: (T_|SELFCHECK|kernel )' "$CONSOLE" | sed 's/^/run-vm-tests:   guest /' || true

if [ -z "${VM_CMD:-}" ] && [ -s "$OUT/output.log" ]; then
	echo
	say "inner pytest summary:"
	awk '/^=+ short test summary info =+$/ { p = 1 } p' "$OUT/output.log" | grep . ||
		tail -n 1 "$OUT/output.log"
fi

if [ "$timed_out" = 1 ] || [ "$reported" = 0 ] || [ "$rc" != 0 ]; then
	echo
	[ "$reported" = 1 ] || say "the guest never reported a status (qemu exit $qrc)"
	say "last lines of $CONSOLE:"
	tail -n 40 "$CONSOLE" | sed 's/^/  | /'
fi
say "inner exit status: $rc (results in $OUT)"
exit "$rc"
