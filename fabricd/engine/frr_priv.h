/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/frr_priv.h - what engine/frr.c shares with engine/frr_zebra.c. */
#ifndef FABRICD_FRR_PRIV_H
#define FABRICD_FRR_PRIV_H

#include <stdbool.h>

#include <jansson.h>

/*
 * How long `show running-config` may take: it is read on every plan and
 * daemon pass, which a bgpd that takes the connection and never answers
 * (stopped, stuck) must not hold up for FRR_RUN_TIMEOUT_MS. Zebra's
 * questions get as long.
 */
#define FRR_READ_TIMEOUT_MS 3000

/* Whether FRR's daemon (zebra, bgpd) of pathspace runs: its pid file names a live process. */
bool frr_daemon_alive(const char *pathspace, const char *daemon);
/* The JSON output of `vtysh [-N NAME] -c CMD` within timeout_ms, or NULL; run()'s result in *ret.
 */
json_t *frr_show_json_within(const char *pathspace, const char *cmd, int timeout_ms, int *ret);

#endif
