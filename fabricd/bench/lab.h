/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lab.h - the bench's two-node cluster, in namespaces of this host, as
 * the integration tests build theirs (tests/integration/fabtest), with names
 * of its own ("fb" + 4 hex digits of the PID = ID):
 *
 *   ID-sw   switch: bridge br0; ports IDn1, IDn2 (veth to the nodes' eth0)
 *   ID-n1   node n1: eth0 192.0.2.11/24; wgfab0, vx100, vs200 and the
 *           bridges bplain, bsecure built by `fabricd apply`; ports tapp, taps
 *   ID-n2   node n2: the same with .12
 *   ID-g1   guest on n1: ethp 10.100.0.1/24 (on bplain), eths 10.200.0.1/24 (on bsecure)
 *   ID-g2   guest on n2: .2
 *
 * Each node also has a mount namespace of its own (the file
 * /run/fabricd-bench-ID/nN.mnt keeps it) with a private tmpfs on
 * /run/wireguard, where its wireguard-go puts its control socket.
 * Nothing of the lab is ever in the host's own namespaces.
 */
#ifndef FABRICD_BENCH_LAB_H
#define FABRICD_BENCH_LAB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench/bench.h"
#include "wireguard/wg.h"

enum lab_where {
	LAB_HOST = -1, /* no namespace change */
	LAB_SW,
	LAB_N1,
	LAB_N2,
	LAB_G1,
	LAB_G2,
	LAB_N_NS,
};

#define LAB_NODES	 2
#define LAB_PLAIN_VNI	 100
#define LAB_SECURE_VNI	 200
#define LAB_UNDERLAY_MTU 1500
#define LAB_MAX_PROCS	 64

struct lab_ns_id {
	dev_t dev;
	ino_t ino;
};

struct bench_lab {
	char id[8];   /* "fb" + 4 hex digits */
	char dir[64]; /* /run/fabricd-bench-ID: definition, keys, logs, mount namespace files */
	bool dir_made, dir_mounted;
	char ns[LAB_N_NS][32];
	bool ns_made[LAB_N_NS];
	int ns_fd[LAB_N_NS];
	struct lab_ns_id ns_id[LAB_N_NS];
	char mnt[LAB_NODES][96];
	bool mnt_made[LAB_NODES];
	int mnt_fd[LAB_NODES];
	struct lab_ns_id mnt_id[LAB_NODES];
	char config[96];
	char key[LAB_NODES][96];
	enum wg_backend backend;
	enum wg_backend_choice backend_choice;
	bool verbose;
	bool reference; /* ID "fr" + 4 hex digits, built by bench/labref.c, not fabricd */
	unsigned int fabric_mtu, zone_mtu;
	double apply_seconds; /* both nodes' apply together */
};

/* The addresses the paths use; where the client and the server run. */
struct lab_path {
	enum lab_where client, server;
	const char *server_addr;
	uint16_t port;
};
void lab_path_of(enum bench_path p, struct lab_path *out);

/*
 * Claims the lab's names (refusing when any of them exists), builds the
 * namespaces, the underlay, the definition and keys, runs fabricd's apply
 * on both nodes and attaches the guests. 0 or -1 (logged); call lab_down()
 * in either case. A reference lab (--reference) has the ID "fr" + the same
 * 4 hex digits and is built by hand instead (bench/labref.h), at the MTUs
 * set in fabric_mtu and zone_mtu before lab_up() (0: the computed ones).
 */
void lab_init(struct bench_lab *lab, enum wg_backend backend, enum wg_backend_choice choice,
	      bool verbose, bool reference);
int lab_up(struct bench_lab *lab);

/*
 * Ends every process in the lab's namespaces (by PID), unmounts and removes
 * the namespaces and the private directory. Safe to call more than once and
 * on a half-built lab. 0, or -1 when something could not be removed (logged,
 * with what to do).
 */
int lab_down(struct bench_lab *lab);

/*
 * Starts argv (argv[0] looked up in PATH) in where's namespaces, stdin from
 * /dev/null, stdout to out_fd and stderr to err_fd (-1: /dev/null). The PID,
 * or -errno.
 */
pid_t lab_spawn(const struct bench_lab *lab, enum lab_where where, char *const argv[], int out_fd,
		int err_fd);

/*
 * Waits for pid up to timeout_ms (< 0: no limit); SIGKILLs it when the time
 * is up or bench_stop is set. Its wait status, or -ETIMEDOUT / -EINTR
 * (after killing and reaping it) or -errno.
 */
int lab_wait(pid_t pid, int timeout_ms);

/* Sleeps ms milliseconds; a signal cuts it short (bench_stop is then set). */
void lab_sleep_ms(long ms);

/* PIDs of the live processes named comm inside the nodes' namespaces; how many. */
size_t lab_find(const struct bench_lab *lab, const char *comm, pid_t *pids, size_t max);

#endif
