/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * labnet.h - inside the bench lab's namespaces (bench/lab.h): the
 * underlay links, the definition with fresh keys, fabricd's apply on both
 * nodes and the guests on the vnet bridges. Internal to the bench.
 */
#ifndef FABRICD_BENCH_LABNET_H
#define FABRICD_BENCH_LABNET_H

#include "bench/lab.h"
#include "netlink/nl.h"

/*
 * A route netlink socket inside the network namespace net_fd (a socket keeps
 * its namespace); the thread returns to its own. 0 or -errno.
 */
int labnet_nl_open_in(int net_fd, struct nl_sock *s);

/* Everything after the namespaces exist. 0 or -1 (logged). */
int labnet_build(struct bench_lab *lab);

/* Runs fn(lab, arg) in a child inside where's namespaces; its exit status or -errno. */
int lab_run_in(const struct bench_lab *lab, enum lab_where where,
	       int (*fn)(const struct bench_lab *lab, void *arg), void *arg, int timeout_ms);

#endif
