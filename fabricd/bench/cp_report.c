// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/cp_report.c - the control-plane bench's table (each time with its
 * ratio to its reference and the step's peak RSS) and its JSON
 * (schemas/bench-control-plane.schema.json).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench/control_plane.h"
#include "base/log.h"

static const char *const labels[CP_N_STEPS] = {
    "iproute2 build (ip + bridge -batch)", "fabricd apply, from empty",
    "fabricd plan, nothing to do",	   "fabricd apply, nothing to do",
    "fabricd apply, one vnet added",	   "fabricd down",
    "iproute2 link deletes (ip -batch)",
};

/* What a step's time is compared with; CP_N_STEPS: nothing (the reference itself). */
static enum cp_step ratio_to(enum cp_step s)
{
	switch (s) {
	case CP_BUILD:
		return CP_REF_BUILD;
	case CP_PLAN:
	case CP_NOOP:
	case CP_ADD_VNET:
		return CP_BUILD;
	case CP_DOWN:
		return CP_REF_DOWN;
	default:
		return CP_N_STEPS;
	}
}

double cp_ratio_of(const struct cp_run *r, enum cp_step s)
{
	enum cp_step to = ratio_to(s);

	if (to == CP_N_STEPS || !r->step[s].ran || !r->step[to].ran || r->step[to].seconds <= 0)
		return -1;
	return r->step[s].seconds / r->step[to].seconds;
}

double cp_daemon_ratio(const struct cp_run *r)
{
	const struct cp_result *b = &r->step[CP_BUILD];

	if (!r->daemon.add_vnet_done || !b->ran || b->seconds <= 0)
		return -1;
	return r->daemon.add_vnet_seconds / b->seconds;
}

static void print_daemon(const struct cp_run *r, FILE *f)
{
	const struct cp_daemon *d = &r->daemon;
	char ratio[32] = "";

	if (!d->ran) {
		fprintf(f, "%-36s %9s\n", "fabricd run (daemon)", "not run");
		return;
	}
	if (cp_daemon_ratio(r) >= 0)
		snprintf(ratio, sizeof(ratio), "%.1f%% of apply", 100 * cp_daemon_ratio(r));
	fprintf(f, "%-36s %9.2f  %-16s %6.1f MiB RSS\n", "fabricd run, adopting the node",
		d->startup_seconds, "", (double)d->steady_rss_kib / 1024);
	if (d->idle_seconds > 0)
		fprintf(f, "%-36s %9.1f  %.2f%% of a core\n", "fabricd run, at rest (seconds)",
			d->idle_seconds, d->idle_cpu_percent);
	fprintf(f, "%-36s %9.3f  %-16s", "fabricd run, one vnet added", d->add_vnet_seconds,
		d->add_vnet_done ? ratio : "FAILED");
	if (d->add_vnet_done && d->n_add_vnet_runs > 1)
		fprintf(f, "%25s median of %u", "", d->n_add_vnet_runs);
	fprintf(f, "\n");
	fprintf(f,
		"%-36s %9u  %-16s %6.1f MiB RSS (before: %.1f MiB, after half: %.1f MiB, peak %.1f "
		"MiB)\n",
		"fabricd run, SIGHUP reloads", d->reloads, "",
		(double)d->rss_after_reloads_kib / 1024, (double)d->rss_before_reloads_kib / 1024,
		(double)d->rss_half_reloads_kib / 1024, (double)d->peak_rss_kib / 1024);
}

/* The same for CPU time (load on a shared machine stretches wall time, not this). */
static double cpu_ratio_of(const struct cp_run *r, enum cp_step s)
{
	enum cp_step to = ratio_to(s);

	if (to == CP_N_STEPS || !r->step[s].ran || !r->step[to].ran || r->step[to].cpu <= 0)
		return -1;
	return r->step[s].cpu / r->step[to].cpu;
}

void cp_print(const struct cp_run *r, FILE *f)
{
	fprintf(f,
		"control plane of node n1: %u nodes, %u VNIs (%u plain, %u secure), %llu flood "
		"entries; WireGuard %s\n\n",
		r->o.nodes, r->o.vnis, r->plain, r->secure, r->flood, r->backend);
	fprintf(f, "%-36s %9s  %-16s %10s  %s\n", "step", "seconds", "ratio", "peak RSS",
		"CPU s (ratio)");
	for (int s = 0; s < CP_N_STEPS; s++) {
		const struct cp_result *x = &r->step[s];
		double q = cp_ratio_of(r, s);
		char ratio[32] = "reference";

		if (!x->ran) {
			fprintf(f, "%-36s %9s\n", labels[s], "not run");
			continue;
		}
		if (q >= 0 && ratio_to(s) == CP_BUILD)
			snprintf(ratio, sizeof(ratio), "%.1f%% of apply", 100 * q);
		else if (q >= 0)
			snprintf(ratio, sizeof(ratio), "%.2fx", q);
		fprintf(f, "%-36s %9.2f  %-16s %6.1f MiB  %5.2f", labels[s], x->seconds, ratio,
			(double)x->maxrss_kib / 1024, x->cpu);
		if (cpu_ratio_of(r, s) >= 0)
			fprintf(f, " (%.1f%s)",
				ratio_to(s) == CP_BUILD ? 100 * cpu_ratio_of(r, s)
							: cpu_ratio_of(r, s),
				ratio_to(s) == CP_BUILD ? "%" : "x");
		if (x->n_runs > 1)
			fprintf(f, "  median of %u", x->n_runs);
		fprintf(f, "%s\n", x->status ? "  FAILED" : "");
		if (s == CP_REF_BUILD)
			fprintf(f, "%-36s %9.2f  %-16s %6.1f MiB\n%-36s %9.2f  %-16s %6.1f MiB\n",
				"  of which ip -batch (links)", x->sub[0], "",
				(double)x->sub_rss[0] / 1024, "  of which bridge -batch (fdb)",
				x->sub[1], "", (double)x->sub_rss[1] / 1024);
	}
	print_daemon(r, f);
	cp_print_targets(r, f);
	fprintf(f,
		"\nbuilt: reference %u bridges, %u VXLAN, %u flood entries; fabricd %u, %u, %u "
		"and %u fabric device; left after down: %u links, %u processes\n",
		r->ref_built.bridges, r->ref_built.vxlans, r->ref_built.fdb, r->fab_built.bridges,
		r->fab_built.vxlans, r->fab_built.fdb, r->fab_built.wireguard,
		r->fab_after.bridges + r->fab_after.vxlans + r->fab_after.wireguard,
		r->fab_after.processes);
	fprintf(f, "%s in %.1f s\n", r->failed ? "FAILED (see the errors above)" : "ok",
		r->wall_seconds);
}

static json_t *counts_json(const struct cp_counts *c)
{
	return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "bridges", (json_int_t)c->bridges,
			 "vxlans", (json_int_t)c->vxlans, "flood_entries", (json_int_t)c->fdb,
			 "fabric_devices", (json_int_t)c->wireguard, "other_links",
			 (json_int_t)c->other_links, "processes", (json_int_t)c->processes);
}

/* Each run's seconds, in order, when the step's time is a median of several. */
static json_t *runs_json(const struct cp_result *x)
{
	json_t *a = json_array();

	for (unsigned int i = 0; a && i < x->n_runs; i++)
		json_array_append_new(a, json_real(x->runs[i]));
	return a;
}

static json_t *step_json(const struct cp_run *r, enum cp_step s)
{
	const struct cp_result *x = &r->step[s];
	double q = cp_ratio_of(r, s);
	enum cp_step to = ratio_to(s);
	json_t *o = json_pack("{s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
			      cp_step_name(s), "description", labels[s], "ran", x->ran,
			      "exit_status", x->ran ? json_integer(x->status) : json_null(),
			      "seconds", x->ran ? json_real(x->seconds) : json_null(),
			      "cpu_seconds", x->ran ? json_real(x->cpu) : json_null(), "cpu_ratio",
			      cpu_ratio_of(r, s) >= 0 ? json_real(cpu_ratio_of(r, s)) : json_null(),
			      "peak_rss_kib", x->ran ? json_integer(x->maxrss_kib) : json_null(),
			      "ratio", q >= 0 ? json_real(q) : json_null(), "ratio_to",
			      to == CP_N_STEPS ? json_null() : json_string(cp_step_name(to)));

	if (o && x->n_runs > 1 && json_object_set_new(o, "runs_seconds", runs_json(x)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *steps_json(const struct cp_run *r)
{
	json_t *a = json_array();

	for (int s = 0; a && s < CP_N_STEPS; s++)
		json_array_append_new(a, step_json(r, s));
	return a;
}

static json_t *head_json(const struct cp_run *r)
{
	struct utsname u;
	char kernel[160] = "unknown";

	if (uname(&u) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s", u.sysname, u.release);
	return json_pack("{s:i, s:s, s:{s:i, s:s}, s:{s:i, s:i, s:i, s:i, s:i, s:I, s:b}, "
			 "s:{s:s}, s:f, s:b}",
			 "version", 1, "tool", "fabricd bench --control-plane", "host", "cpus",
			 (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "kernel", kernel, "settings",
			 "nodes", (json_int_t)r->o.nodes, "vnis", (json_int_t)r->o.vnis,
			 "plain_vnis", (json_int_t)r->plain, "secure_vnis", (json_int_t)r->secure,
			 "vnets_per_zone", (json_int_t)CP_ZONE_VNETS, "flood_entries",
			 (json_int_t)r->flood, "quick", r->o.quick, "wireguard", "backend",
			 r->backend, "wall_seconds", r->wall_seconds, "ok", !r->failed);
}

static json_t *opt_real(bool have, double v)
{
	return have ? json_real(v) : json_null();
}

static json_t *daemon_json(const struct cp_run *r)
{
	const struct cp_daemon *d = &r->daemon;
	bool up = d->ran && d->steady_rss_kib > 0;
	json_t *o, *runs = json_array();

	for (unsigned int i = 0; runs && i < d->n_add_vnet_runs; i++)
		json_array_append_new(runs, json_real(d->add_vnet_runs[i]));
	o = json_pack(
	    "{s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:o, s:o}", "ran", d->ran,
	    "startup_seconds", opt_real(up, d->startup_seconds), "add_vnet_seconds",
	    opt_real(d->add_vnet_done, d->add_vnet_seconds), "add_vnet_timed_by",
	    d->add_vnet_done ? json_string(d->add_vnet_heard ? "announcements" : "polling")
			     : json_null(),
	    "add_vnet_ratio", opt_real(cp_daemon_ratio(r) >= 0, cp_daemon_ratio(r)),
	    "steady_rss_kib", up ? json_integer(d->steady_rss_kib) : json_null(),
	    "rss_before_reloads_kib",
	    d->rss_before_reloads_kib ? json_integer(d->rss_before_reloads_kib) : json_null(),
	    "rss_half_reloads_kib",
	    d->rss_half_reloads_kib ? json_integer(d->rss_half_reloads_kib) : json_null(),
	    "rss_after_reloads_kib",
	    d->rss_after_reloads_kib ? json_integer(d->rss_after_reloads_kib) : json_null(),
	    "peak_rss_kib", d->peak_rss_kib ? json_integer(d->peak_rss_kib) : json_null(),
	    "reloads", (json_int_t)d->reloads, "reloads_wanted", (json_int_t)d->reloads_wanted,
	    "exit_status", d->ran ? json_integer(d->exit_status) : json_null(), "idle_cpu_percent",
	    opt_real(d->idle_seconds > 0, d->idle_cpu_percent));
	if (o && runs && json_object_set_new(o, "add_vnet_runs_seconds", runs) == 0)
		return o;
	json_decref(o);
	json_decref(runs);
	return NULL;
}

int cp_write_json(const struct cp_run *r, const char *path)
{
	const struct cp_result *ref = &r->step[CP_REF_BUILD];
	json_t *root = head_json(r);
	int ret = -1;

	if (root && json_object_set_new(root, "steps", steps_json(r)) == 0 &&
	    json_object_set_new(root, "reference_parts",
				json_pack("{s:f, s:f, s:I, s:I}", "ip_seconds", ref->sub[0],
					  "bridge_seconds", ref->sub[1], "ip_peak_rss_kib",
					  (json_int_t)ref->sub_rss[0], "bridge_peak_rss_kib",
					  (json_int_t)ref->sub_rss[1])) == 0 &&
	    json_object_set_new(root, "daemon", daemon_json(r)) == 0 &&
	    json_object_set_new(root, "targets", cp_targets_json(r)) == 0 &&
	    json_object_set_new(root, "kernel_state",
				json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "reference_built",
					  counts_json(&r->ref_built), "reference_after_delete",
					  counts_json(&r->ref_after), "fabricd_built",
					  counts_json(&r->fab_built), "fabricd_after_add",
					  counts_json(&r->fab_added), "fabricd_after_daemon_add",
					  counts_json(&r->fab_daemon), "fabricd_after_down",
					  counts_json(&r->fab_after))) == 0 &&
	    json_object_set_new(root, "namespaces",
				json_pack("{s:I, s:I, s:I}", "reference_net_inode",
					  (json_int_t)r->ref.net_ino, "fabricd_net_inode",
					  (json_int_t)r->fab.net_ino, "fabricd_mnt_inode",
					  (json_int_t)r->fab.mnt_ino)) == 0 &&
	    json_dump_file(root, path, JSON_INDENT(2)) == 0)
		ret = 0;
	if (ret < 0)
		log_error("bench: cannot write the JSON report %s", path);
	json_decref(root);
	return ret;
}
