/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * labref.h - `fabricd bench --reference`: the bench lab (bench/lab.h)
 * built by hand, with iproute2 and wireguard-tools, as an operator would
 * without fabricd: the same namespaces, switch, veths, addresses, WireGuard
 * implementation, VXLAN devices, bridges, guests and MTUs, and nothing else
 * (no guard table, no port isolation, no alias, no fabricd process).
 * Internal to bench/lab.c.
 */
#ifndef FABRICD_BENCH_LABREF_H
#define FABRICD_BENCH_LABREF_H

#include "bench/lab.h"

/* Everything after the namespaces exist, by shell scripts of ip/bridge/wg. 0 or -1 (logged). */
int labref_build(struct bench_lab *lab);

#endif
