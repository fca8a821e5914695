/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/control_plane.h - `fabricd bench --control-plane`: one node's share of
 * an N-node, V-VNI cluster (half the vnets in plain zones, half in secure
 * ones) built in fresh namespaces, first by iproute2's batch mode (the
 * kernel's own cost, the reference), then by fabricd itself, timing each step
 * and the peak RSS of each child. The pieces:
 *   bench/control_plane.c  orchestration: the steps, in order
 *   bench/cp_def.c         the definition (real keys, made-up addresses), the batch files
 *   bench/cp_ns.c          namespaces, running a child in them, counting what the kernel has
 *   bench/cp_report.c      the table and the JSON (schemas/bench-control-plane.schema.json)
 *   bench/cp_targets.c     issue 17's targets, each judged against this run
 */
#ifndef FABRICD_BENCH_CONTROL_PLANE_H
#define FABRICD_BENCH_CONTROL_PLANE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "engine/options.h"

#define CP_DEFAULT_NODES 64
#define CP_DEFAULT_VNIS	 1024
#define CP_QUICK_NODES	 8
#define CP_QUICK_VNIS	 64
#define CP_MAX_NODES	 1000
#define CP_MAX_VNIS	 16384
#define CP_ZONE_VNETS	 16   /* vnets per zone */
#define CP_ZONE_MTU	 1380 /* every zone's MTU (below what both transports carry) */
/* seconds a step may take: this, plus one per 20 flood entries */
#define CP_STEP_TIMEOUT 120
/*
 * plan and apply with nothing to do, and the one-vnet steps, take a tenth of
 * a build or less: one run is noise (the first plan after the build ran a
 * third slower here than the ones after it; one vnet's apply took 0.10 to
 * 0.14 s in three bench runs of one hour; the daemon's one vnet 13 to 23 ms
 * in one bench run). Each runs this often, a vnet more each time for the
 * one-vnet steps, and the median counts: five, where three let one slow run
 * of the host move the result.
 */
#define CP_NOOP_RUNS 5
/* seconds between the build and the no-op steps (control_plane.c says why) */
#define CP_SETTLE_S    2
#define CP_PLAIN_VNI0  100000 /* plain vnets: VNIs from here */
#define CP_SECURE_VNI0 200000 /* secure vnets: VNIs from here */

struct cp_opts {
	unsigned int nodes, vnis;
	bool quick, verbose;
	const char *json_path; /* NULL: none */
	enum wg_backend_choice wg_backend;
};

enum cp_step {
	CP_REF_BUILD, /* ip -batch (links) then bridge -batch (flood entries) */
	CP_BUILD,     /* fabricd apply from empty */
	CP_PLAN,      /* fabricd plan, nothing to do */
	CP_NOOP,      /* fabricd apply, nothing to do */
	CP_ADD_VNET,  /* fabricd apply after one vnet was added (once per run, one more each) */
	CP_DOWN,      /* fabricd down */
	CP_REF_DOWN,  /* ip -batch of link deletes */
	CP_N_STEPS,
};

struct cp_result {
	bool ran;
	int status;	 /* exit status (128 + signal when killed) */
	double seconds;	 /* wall time */
	double cpu;	 /* user + system time of the child and what it waited for */
	long maxrss_kib; /* wait4's ru_maxrss of the child */
	double sub[2];	 /* CP_REF_BUILD: ip, bridge; otherwise 0 */
	long sub_rss[2]; /* their peak RSS */
	/* the no-op and one-vnet steps run CP_NOOP_RUNS times; the result is the median run */
	unsigned int n_runs;
	double runs[CP_NOOP_RUNS];
};

/* What the kernel holds in a namespace. */
struct cp_counts {
	unsigned int bridges, vxlans, fdb, wireguard, other_links;
	unsigned int processes; /* processes inside the namespace */
};

struct cp_ns {
	int net_fd, mnt_fd; /* -1: none */
	unsigned long long net_ino, mnt_ino;
	dev_t net_dev;
};

/* The daemon steps (bench/cp_daemon.c). */
struct cp_daemon {
	pid_t pid; /* 0: not running */
	bool ran, add_vnet_done;
	long log_from;
	double t0, startup_seconds; /* until it had adopted the built node */
	double add_vnet_seconds;    /* definition written until the vnet's flood entries are in */
	bool add_vnet_heard;	    /* timed by the kernel's announcements, not by asking */
	/* one vnet added CP_NOOP_RUNS times, a rest between: each time, in order; the median */
	unsigned int n_add_vnet_runs;
	double add_vnet_runs[CP_NOOP_RUNS];
	long steady_rss_kib, rss_before_reloads_kib, rss_after_reloads_kib;
	long rss_half_reloads_kib; /* after the first half: flat means the second half adds nothing
				    */
	long peak_rss_kib;	   /* VmHWM after the reloads: the largest pass */
	/* CPU at rest (probes every 10 s to peers that never answer, the periodic check) */
	double idle_seconds, idle_cpu_percent; /* of one core; idle_seconds 0: not measured */
	unsigned int reloads, reloads_wanted;
	int exit_status;
};

#define CP_RELOADS	 1000 /* SIGHUP reloads at the default size (issue 17: flat over 1000) */
#define CP_QUICK_RELOADS 20
/*
 * Seconds the adopted daemon is watched at rest for its CPU: two probe
 * rounds (every 10 s), forty periodic checks; the full read (every 60 s)
 * falls into one such window in three.
 */
#define CP_IDLE_S	20
#define CP_QUICK_IDLE_S 2

struct cp_run {
	struct cp_opts o;
	char dir[64];
	char def[96], key[96], ref_links[96], ref_fdb[96], ref_del[96], log[96];
	bool dir_made;
	unsigned int plain, secure; /* vnets of each transport */
	unsigned long long flood;   /* head-end entries: vnets x (nodes - 1) */
	char (*pub)[48];	    /* every node's public key, base64 */
	char backend[16];	    /* "kernel" or "userspace", as found after the build */
	struct cp_ns ref, fab;
	struct cp_result step[CP_N_STEPS];
	struct cp_counts ref_built, ref_after, fab_built, fab_added, fab_daemon, fab_after;
	struct cp_daemon daemon;
	unsigned int extra; /* extra plain vnets in the definition written last */
	double wall_seconds;
	bool failed;
};

const char *cp_step_name(enum cp_step s);

/* --- bench/cp_def.c --------------------------------------------------------- */
/* Keys for every node (node 1's private key into r->key, mode 0600). 0 or -1 (logged). */
int cp_keys(struct cp_run *r);
/*
 * The definition into r->def (renamed into place): every vnet, plus extra more
 * plain vnets; *renamed_at (CLOCK_MONOTONIC s, if not NULL) when it was. 0 or -1.
 */
int cp_write_definition(const struct cp_run *r, unsigned int extra, double *renamed_at);
/* The bridge name of plain vnet k (k = r->plain is the first extra one). */
void cp_plain_bridge(unsigned int k, char *out, size_t len);
/* The iproute2 batch files building (and deleting) exactly the vnets fabricd builds. */
int cp_write_batches(const struct cp_run *r);

/* --- bench/cp_ns.c ---------------------------------------------------------- */
/*
 * A fresh network namespace (and with with_mnt a mount namespace with private
 * tmpfs on /run/wireguard and /run/fabricd, tag their source). 0 or -errno.
 */
int cp_ns_make(struct cp_ns *ns, bool with_mnt, const char *tag);
/* Ends every process left in ns (by PID) and drops the namespace. */
void cp_ns_drop(struct cp_ns *ns);
/*
 * Runs argv in ns (argv[0] a path), output appended to log; times it, and
 * kills it after timeout_s seconds (its status then 128 + SIGKILL). 0 or -errno.
 */
int cp_exec(const struct cp_ns *ns, char *const argv[], const char *log, int timeout_s,
	    struct cp_result *out);
/* Starts argv in ns, output appended to log, without waiting: its PID or -1 (logged). */
pid_t cp_spawn(const struct cp_ns *ns, char *const argv[], const char *log);
/* Counts the links, flood entries and processes in ns. 0 or -errno. */
int cp_count(const struct cp_ns *ns, struct cp_counts *c, char *backend, size_t backend_len);

/* --- bench/cp_daemon.c ------------------------------------------------------ */
/* Starts `fabricd run` (argv) in ns and waits until it has adopted the node. 0 or -1 (logged). */
int cp_daemon_start(const struct cp_ns *ns, char *const argv[], const char *log,
		    struct cp_daemon *d);
/*
 * write_def(arg) adds a vnet to the definition; the time from its rename into
 * place until bridge has want_flood flood entries on its ports. 0 or -1 (logged).
 */
int cp_daemon_add_vnet(const struct cp_ns *ns, const char *bridge, unsigned int want_flood,
		       int (*write_def)(void *arg, double *renamed_at), void *arg,
		       struct cp_daemon *d);
/* The daemon's CPU over seconds at rest, as a share of one core, into d. */
void cp_daemon_idle(unsigned int seconds, struct cp_daemon *d);
/* n SIGHUP reloads, each waited for; the RSS before and after. 0 or -1 (logged). */
int cp_daemon_reloads(const char *log, unsigned int n, struct cp_daemon *d);
/* SIGTERM, and the exit status. */
void cp_daemon_stop(struct cp_daemon *d);

/* --- bench/cp_report.c ------------------------------------------------------ */
/* Step s's seconds over its reference's (the build, or iproute2's); < 0 when there is none. */
double cp_ratio_of(const struct cp_run *r, enum cp_step s);
/* The daemon's one vnet over the build's seconds; < 0 when either is missing. */
double cp_daemon_ratio(const struct cp_run *r);
void cp_print(const struct cp_run *r, FILE *f);
/* The JSON report to path. 0 or -1 (logged). */
int cp_write_json(const struct cp_run *r, const char *path);

/* --- bench/cp_targets.c ----------------------------------------------------- */
/* Each of issue 17's targets: this run's value against its bound, met or not. */
void cp_print_targets(const struct cp_run *r, FILE *f);
/* The same as a JSON array; NULL on ENOMEM. */
json_t *cp_targets_json(const struct cp_run *r);

/* The whole control-plane bench; the process exit status. */
int cp_main(const struct cp_opts *o);

#endif
