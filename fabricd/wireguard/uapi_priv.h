/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uapi_priv.h - what the two halves of the userspace backend share:
 * wireguard/uapi.c (the UAPI text protocol and the socket) and wireguard/uapi_proc.c (the
 * wireguard-go process: start, PID file, stop, /proc checks). Not for use
 * outside them.
 */
#ifndef FABRICD_WG_UAPI_PRIV_H
#define FABRICD_WG_UAPI_PRIV_H

#include <stddef.h>
#include <stdint.h>

#define WG_GO	     "wireguard-go"
#define RUN_PATH_MAX 64 /* WG_UAPI_RUN_DIR "/" IFNAME ".pid.tmp" */

/* WG_UAPI_RUN_DIR/<ifname>.<suffix> ("sock", "pid", "pid.tmp") into buf. */
void wg_uapi_run_path(char *buf, size_t len, const char *ifname, const char *suffix);

/* A decimal number of at most max, nothing else (no sign, no space). 0 or -EPROTO. */
int wg_uapi_parse_u64(const char *s, uint64_t max, uint64_t *out);

#endif
