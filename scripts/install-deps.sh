#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs every build, test and demo dependency from Debian's archive.
# Both README commands call this first; it is quick when all is present.
# Runtime (for the package): libmicrohttpd12 (fabricd run --metrics), plus the
# shared libraries of jansson, libmnl, libsodium, libnftables and libsystemd.
set -eu

PKGS="build-essential pkg-config clang libclang-rt-14-dev
libjansson-dev libmnl-dev libsodium-dev libnftables-dev libsystemd-dev
iproute2 iputils-ping wireguard-tools wireguard-go nftables tcpdump iperf3 strace linux-perf
python3 python3-pytest python3-jsonschema valgrind util-linux procps kmod
qemu-system-x86 linux-image-amd64 busybox-static cpio xz-utils zstd
frr frr-pythontools ifupdown2 libmicrohttpd-dev python3-prometheus-client graphviz
debhelper dpkg-dev fakeroot lintian bash-completion man-db git systemd"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# --no-install-recommends: wireguard-tools would otherwise pull in a second kernel
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
