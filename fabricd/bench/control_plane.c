// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/control_plane.c - `fabricd bench --control-plane`, in order: the
 * definition and batch files in a private directory; in a fresh network
 * namespace the iproute2 reference (`ip -batch` links, `bridge -batch` flood
 * entries, counted, then `ip -batch` deletes); in another, with a mount
 * namespace of its own, fabricd itself (/proc/self/exe as a child, so wait4
 * gives each step's peak RSS): apply from empty, plan and apply with nothing
 * to do, apply after adding one vnet (each of these CP_NOOP_RUNS times, the
 * median counting), the daemon, down. Then the table, the JSON, and nothing left
 * behind.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/control_plane.h"
#include "base/log.h"

const char *cp_step_name(enum cp_step s)
{
	static const char *const names[CP_N_STEPS] = {
	    "reference_build", "apply_build", "plan_noop",	"apply_noop",
	    "apply_add_vnet",  "down",	      "reference_down",
	};

	return s < CP_N_STEPS ? names[s] : "?";
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
	bench_stop = sig;
}

static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: waits return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int setup_dir(struct cp_run *r)
{
	snprintf(r->dir, sizeof(r->dir), "/run/fabricd-cpbench-%d", (int)getpid());
	if (mkdir(r->dir, 0700) < 0) {
		log_error("bench: cannot create %s: %s%s", r->dir, strerror(errno),
			  errno == EEXIST ? " (a stale run of this PID: remove it)" : "");
		return -1;
	}
	r->dir_made = true;
	snprintf(r->def, sizeof(r->def), "%s/cluster.json", r->dir);
	snprintf(r->key, sizeof(r->key), "%s/n1.key", r->dir);
	snprintf(r->ref_links, sizeof(r->ref_links), "%s/links.batch", r->dir);
	snprintf(r->ref_fdb, sizeof(r->ref_fdb), "%s/fdb.batch", r->dir);
	snprintf(r->ref_del, sizeof(r->ref_del), "%s/delete.batch", r->dir);
	snprintf(r->log, sizeof(r->log), "%s/steps.log", r->dir);
	return 0;
}

static void remove_dir(struct cp_run *r)
{
	DIR *d;
	struct dirent *e;

	if (!r->dir_made)
		return;
	d = opendir(r->dir);
	while (d && (e = readdir(d))) {
		char path[384];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", r->dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	if (rmdir(r->dir) < 0)
		log_error("bench: cannot remove %s: %s; remove it by hand", r->dir,
			  strerror(errno));
	r->dir_made = false;
}

static void log_header(const struct cp_run *r, const char *what)
{
	FILE *f = fopen(r->log, "ae");

	if (f) {
		fprintf(f, "=== %s\n", what);
		fclose(f);
	}
}

/* One timed child; a failure (not started, or a nonzero exit) is logged and marks the run. */
static int run_step(struct cp_run *r, const struct cp_ns *ns, const char *what, char *const argv[],
		    struct cp_result *out, int want)
{
	int err;

	if (bench_stop)
		return -1;
	if (r->o.verbose)
		log_info("bench: %s", what);
	log_header(r, what);
	err = cp_exec(ns, argv, r->log, CP_STEP_TIMEOUT + (int)(r->flood / 20), out);
	if (err < 0) {
		log_error("bench: cannot run %s: %s", argv[0], strerror(-err));
		r->failed = true;
		return -1;
	}
	if (out->status != want) {
		log_error("bench: %s exited with %d (expected %d); its output is in %s", what,
			  out->status, want, r->log);
		r->failed = true;
		return -1;
	}
	return 0;
}

/* Which of the CP_NOOP_RUNS times t is the median. */
static unsigned int median_of(const double t[CP_NOOP_RUNS])
{
	unsigned int order[CP_NOOP_RUNS];

	for (unsigned int i = 0, j; i < CP_NOOP_RUNS; i++) {
		/* insertion into order[], by time */
		for (j = i; j > 0 && t[order[j - 1]] > t[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	return order[CP_NOOP_RUNS / 2];
}

/* The definition with one more extra vnet than the last. 0 or -1 (logged). */
static int write_next_vnet(void *arg, double *renamed_at)
{
	struct cp_run *r = arg;

	return cp_write_definition(r, ++r->extra, renamed_at);
}

/*
 * A short step run CP_NOOP_RUNS times, after writing the next vnet into the
 * definition each time when add_vnet: out is the run of median time, with
 * the largest peak RSS of all and each run's time in order.
 */
static int run_median(struct cp_run *r, const struct cp_ns *ns, const char *what,
		      char *const argv[], bool add_vnet, struct cp_result *out)
{
	struct cp_result runs[CP_NOOP_RUNS];
	double times[CP_NOOP_RUNS];
	long peak = 0;

	for (int i = 0; i < CP_NOOP_RUNS; i++) {
		runs[i] = (struct cp_result){0};
		if ((add_vnet && write_next_vnet(r, NULL) < 0) ||
		    run_step(r, ns, what, argv, &runs[i], 0) < 0) {
			*out = runs[i];
			return -1;
		}
		peak = runs[i].maxrss_kib > peak ? runs[i].maxrss_kib : peak;
		times[i] = runs[i].seconds;
	}
	*out = runs[median_of(times)];
	out->maxrss_kib = peak;
	out->n_runs = CP_NOOP_RUNS;
	memcpy(out->runs, times, sizeof(times));
	return 0;
}

/* The reference: build, count, delete, count, in a namespace of its own. */
static int run_reference(struct cp_run *r)
{
	char *links[] = {"ip", "-batch", r->ref_links, NULL};
	char *fdb[] = {"bridge", "-batch", r->ref_fdb, NULL};
	char *del[] = {"ip", "-batch", r->ref_del, NULL};
	struct cp_result a = {0}, b = {0};
	struct cp_result *s = &r->step[CP_REF_BUILD];
	int err = cp_ns_make(&r->ref, false, NULL), ret = -1;

	if (err < 0) {
		log_error("bench: cannot create a network namespace: %s", strerror(-err));
		return -1;
	}
	if (run_step(r, &r->ref, "ip -batch (links)", links, &a, 0) < 0 ||
	    run_step(r, &r->ref, "bridge -batch (flood entries)", fdb, &b, 0) < 0)
		goto out;
	*s = (struct cp_result){.ran = true,
				.seconds = a.seconds + b.seconds,
				.cpu = a.cpu + b.cpu,
				.maxrss_kib =
				    a.maxrss_kib > b.maxrss_kib ? a.maxrss_kib : b.maxrss_kib,
				.sub = {a.seconds, b.seconds},
				.sub_rss = {a.maxrss_kib, b.maxrss_kib}};
	if (cp_count(&r->ref, &r->ref_built, NULL, 0) < 0 ||
	    run_step(r, &r->ref, "ip -batch (link deletes)", del, &r->step[CP_REF_DOWN], 0) < 0 ||
	    cp_count(&r->ref, &r->ref_after, NULL, 0) < 0)
		goto out;
	ret = 0;
out:
	cp_ns_drop(&r->ref);
	return ret;
}

/* wireguard-go leaves when its device goes; give it a moment before counting. */
static void count_after_down(struct cp_run *r)
{
	for (int i = 0; i < 100; i++) {
		struct timespec ts = {0, 20 * 1000000L};

		if (cp_count(&r->fab, &r->fab_after, NULL, 0) < 0 || !r->fab_after.processes)
			return;
		nanosleep(&ts, NULL);
	}
}

/* The daemon's one vnet, CP_NOOP_RUNS times from a daemon at rest: the median counts. */
static int daemon_add_vnets(struct cp_run *r)
{
	struct cp_daemon *d = &r->daemon;
	bool heard = true;
	char bridge[32];

	for (unsigned int i = 0; i < CP_NOOP_RUNS; i++) {
		if (i)
			nanosleep(&(struct timespec){CP_SETTLE_S, 0}, NULL);
		cp_plain_bridge(r->plain + r->extra, bridge, sizeof(bridge)); /* the next one */
		if (cp_daemon_add_vnet(&r->fab, bridge, r->o.nodes - 1, write_next_vnet, r, d) < 0)
			return -1;
		d->add_vnet_runs[i] = d->add_vnet_seconds;
		heard = heard && d->add_vnet_heard;
		d->n_add_vnet_runs = i + 1;
	}
	d->add_vnet_seconds = d->add_vnet_runs[median_of(d->add_vnet_runs)];
	d->add_vnet_heard = heard;
	return 0;
}

/*
 * `fabricd run` on the built node: adopted, one more vnet, reloads, stopped.
 * A failure is logged and marks the run; down follows in any case.
 */
static void run_daemon(struct cp_run *r, const char *backend)
{
	char *run[] = {"/proc/self/exe", "run",	 "-c",		 r->def,	  "-n", "n1",
		       "--key-file",	 r->key, "--wg-backend", (char *)backend, NULL};
	struct cp_daemon *d = &r->daemon;

	if (bench_stop || r->failed)
		return;
	log_header(r, "fabricd run (daemon)");
	memset(d, 0, sizeof(*d));
	d->ran = true;
	d->reloads_wanted = r->o.quick ? CP_QUICK_RELOADS : CP_RELOADS;
	if (cp_daemon_start(&r->fab, run, r->log, d) < 0)
		r->failed = true;
	else
		cp_daemon_idle(r->o.quick ? CP_QUICK_IDLE_S : CP_IDLE_S, d);
	if (r->failed || daemon_add_vnets(r) < 0 ||
	    cp_count(&r->fab, &r->fab_daemon, NULL, 0) < 0 ||
	    cp_daemon_reloads(r->log, d->reloads_wanted, d) < 0)
		r->failed = true;
	cp_daemon_stop(d);
	if (d->exit_status) {
		log_error("bench: fabricd run exited with %d; its output is in %s", d->exit_status,
			  r->log);
		r->failed = true;
	}
}

static int run_fabricd(struct cp_run *r)
{
	static const char *const backends[] = {"auto", "kernel", "userspace"};
	const char *backend =
	    backends[r->o.wg_backend <= WG_CHOICE_USERSPACE ? r->o.wg_backend : 0];
	char *apply[] = {"/proc/self/exe", "apply", "-c",	    r->def,	     "-n", "n1",
			 "--key-file",	   r->key,  "--wg-backend", (char *)backend, NULL};
	char *plan[] = {"/proc/self/exe", "plan", "-c",		  r->def,	   "-n", "n1",
			"--key-file",	  r->key, "--wg-backend", (char *)backend, NULL};
	/* down reads no key, and refuses --key-file (885fa52) */
	char *down[] = {"/proc/self/exe", "down",	   "-c", r->def, "-n", "n1",
			"--wg-backend",	  (char *)backend, NULL};
	int err = cp_ns_make(&r->fab, true, r->dir + strlen("/run/")), ret = -1;

	if (err < 0) {
		log_error("bench: cannot create the network and mount namespaces: %s",
			  strerror(-err));
		return -1;
	}
	if (run_step(r, &r->fab, "fabricd apply (from empty)", apply, &r->step[CP_BUILD], 0) < 0 ||
	    cp_count(&r->fab, &r->fab_built, r->backend, sizeof(r->backend)) < 0)
		goto out;
	/*
	 * The node at rest, as an operator finds it: right after the build a plan
	 * ran a third slower (the kernel and wireguard-go still busy with the
	 * thousands of new devices; linkwatch, most likely, not proven).
	 */
	nanosleep(&(struct timespec){CP_SETTLE_S, 0}, NULL);
	/* plan's exit status says whether there is something to do: 0 is the point */
	run_median(r, &r->fab, "fabricd plan (nothing to do)", plan, false, &r->step[CP_PLAN]);
	run_median(r, &r->fab, "fabricd apply (nothing to do)", apply, false, &r->step[CP_NOOP]);
	/* counted whatever the exit status: a failed step must not look like an empty kernel */
	run_median(r, &r->fab, "fabricd apply (one vnet added)", apply, true,
		   &r->step[CP_ADD_VNET]);
	cp_count(&r->fab, &r->fab_added, NULL, 0);
	run_daemon(r, backend);
	run_step(r, &r->fab, "fabricd down", down, &r->step[CP_DOWN], 0);
	count_after_down(r);
	ret = 0;
out:
	cp_ns_drop(&r->fab);
	return ret;
}

static void expect(struct cp_run *r, const char *what, unsigned long long have,
		   unsigned long long want)
{
	if (have == want)
		return;
	log_error("bench: %s: found %llu, expected %llu", what, have, want);
	r->failed = true;
}

/* The kernel held what each side was asked to build, and nothing after. */
static void check_counts(struct cp_run *r)
{
	unsigned int v = r->o.vnis, n = r->o.nodes;

	expect(r, "reference: bridges", r->ref_built.bridges, v);
	/* each plain vnet has a standby secure device too */
	expect(r, "reference: VXLAN devices", r->ref_built.vxlans, v + r->plain);
	expect(r, "reference: flood entries", r->ref_built.fdb, r->flood);
	expect(r, "reference: links left after the deletes",
	       r->ref_after.bridges + r->ref_after.vxlans, 0);
	expect(r, "fabricd: bridges after apply", r->fab_built.bridges, v);
	expect(r, "fabricd: VXLAN devices after apply", r->fab_built.vxlans, v + r->plain);
	expect(r, "fabricd: flood entries after apply", r->fab_built.fdb, r->flood);
	expect(r, "fabricd: fabric device after apply", r->fab_built.wireguard, 1);
	if (r->step[CP_ADD_VNET].ran) {
		expect(r, "fabricd: bridges after adding vnets", r->fab_added.bridges,
		       v + CP_NOOP_RUNS);
		expect(r, "fabricd: flood entries after adding vnets", r->fab_added.fdb,
		       r->flood + CP_NOOP_RUNS * (n - 1));
	}
	if (r->daemon.add_vnet_done) {
		expect(r, "fabricd run: bridges after adding vnets", r->fab_daemon.bridges,
		       v + 2 * CP_NOOP_RUNS);
		expect(r, "fabricd run: flood entries after adding vnets", r->fab_daemon.fdb,
		       r->flood + 2 * CP_NOOP_RUNS * (n - 1));
	}
	if (r->step[CP_DOWN].ran) {
		expect(r, "fabricd: links left after down",
		       r->fab_after.bridges + r->fab_after.vxlans + r->fab_after.wireguard, 0);
		expect(r, "fabricd: processes left after down", r->fab_after.processes, 0);
	}
}

static int check_opts(const struct cp_opts *o)
{
	/* the report is written last: a path it cannot take failed after all the measuring */
	if (bench_check_output("--json", o->json_path) < 0)
		return -1;
	if (geteuid() != 0) {
		log_error("bench: --control-plane needs root (it creates network namespaces)");
		return -1;
	}
	if (o->nodes < 2 || o->nodes > CP_MAX_NODES || o->vnis < 2 || o->vnis > CP_MAX_VNIS) {
		log_error("bench: --nodes must be 2..%d and --vnis 2..%d", CP_MAX_NODES,
			  CP_MAX_VNIS);
		return -1;
	}
	return 0;
}

int cp_main(const struct cp_opts *o)
{
	struct cp_run r = {.o = *o, .ref = {-1, -1, 0, 0, 0}, .fab = {-1, -1, 0, 0, 0}};
	double t0 = now_s();
	int ret = 1;

	if (check_opts(o) < 0)
		return 1;
	install_handlers();
	r.plain = (o->vnis + 1) / 2;
	r.secure = o->vnis - r.plain;
	r.flood = (unsigned long long)o->vnis * (o->nodes - 1);
	snprintf(r.backend, sizeof(r.backend), "none");
	log_info("bench: control plane of node n1 of %u nodes, %u VNIs (%u plain, %u secure), "
		 "%llu flood entries",
		 o->nodes, o->vnis, r.plain, r.secure, r.flood);
	if (setup_dir(&r) < 0 || cp_keys(&r) < 0 || cp_write_definition(&r, 0, NULL) < 0 ||
	    cp_write_batches(&r) < 0)
		goto out;
	if (run_reference(&r) < 0 || bench_stop)
		goto out;
	run_fabricd(&r);
	if (bench_stop)
		goto out;
	check_counts(&r);
	r.wall_seconds = now_s() - t0;
	cp_print(&r, stdout);
	if (o->json_path && cp_write_json(&r, o->json_path) < 0)
		r.failed = true;
	ret = r.failed ? 1 : 0;
out:
	if (bench_stop)
		log_error("bench: interrupted; removing what it built");
	if (ret && r.dir_made && !bench_stop) {
		unlink(r.key); /* the log stays, the key does not */
		log_error("bench: the steps' output is kept in %s (remove %s when done)", r.log,
			  r.dir);
		r.dir_made = false; /* keep it */
	}
	remove_dir(&r);
	free(r.pub);
	return ret;
}
