/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.h - the latency histogram of kernel WireGuard's encryption
 * (as in the eBPF measurements: a kprobe and a kretprobe on the function,
 * hist() of the difference) with bpftrace, or the one-line reason why not.
 */
#ifndef FABRICD_BENCH_TRACE_H
#define FABRICD_BENCH_TRACE_H

#include <stdbool.h>
#include <sys/types.h>

#include "bench/bench.h"
#include "wireguard/wg.h"

/* The function whose latency is measured: what encrypt_packet() calls per packet. */
#define BENCH_TRACE_FUNCTION "chacha20poly1305_encrypt_sg_inplace"

/*
 * Whether the histogram can be taken on this host for this backend; when
 * not, h->reason says why in one line (every reason that applies).
 */
bool bench_trace_possible(enum wg_backend backend, struct bench_hist *h);

/*
 * Starts bpftrace with its output to out_path and waits until its probes
 * are attached (bounded). The PID, or -errno (h->reason filled).
 */
pid_t bench_trace_start(const char *out_path, struct bench_hist *h);

/* Stops it (SIGINT: bpftrace prints its maps) and parses the histogram into h. */
void bench_trace_stop(pid_t pid, const char *out_path, struct bench_hist *h);

/*
 * Parses bpftrace's text hist() ("[1K, 2K)   12 |@@@   |" lines). 0 or
 * -EINVAL when there is no bucket; h->buckets is allocated.
 */
int bench_trace_parse(const char *text, struct bench_hist *h);

#endif
