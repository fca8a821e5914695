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

/* The ratio of step s to its reference; < 0 when there is none. */
static double ratio_of(const struct cp_run *r, enum cp_step s)
{
	enum cp_step to = ratio_to(s);

	if (to == CP_N_STEPS || !r->step[s].ran || !r->step[to].ran || r->step[to].seconds <= 0)
		return -1;
	return r->step[s].seconds / r->step[to].seconds;
}

void cp_print(const struct cp_run *r, FILE *f)
{
	fprintf(f,
		"control plane of node n1: %u nodes, %u VNIs (%u plain, %u secure), %llu flood "
		"entries; WireGuard %s\n\n",
		r->o.nodes, r->o.vnis, r->plain, r->secure, r->flood, r->backend);
	fprintf(f, "%-36s %9s  %-16s %10s\n", "step", "seconds", "ratio", "peak RSS");
	for (int s = 0; s < CP_N_STEPS; s++) {
		const struct cp_result *x = &r->step[s];
		double q = ratio_of(r, s);
		char ratio[32] = "reference";

		if (!x->ran) {
			fprintf(f, "%-36s %9s\n", labels[s], "not run");
			continue;
		}
		if (q >= 0 && ratio_to(s) == CP_BUILD)
			snprintf(ratio, sizeof(ratio), "%.1f%% of apply", 100 * q);
		else if (q >= 0)
			snprintf(ratio, sizeof(ratio), "%.2fx", q);
		fprintf(f, "%-36s %9.2f  %-16s %6.1f MiB%s\n", labels[s], x->seconds, ratio,
			(double)x->maxrss_kib / 1024, x->status ? "  FAILED" : "");
		if (s == CP_REF_BUILD)
			fprintf(f, "%-36s %9.2f  %-16s %6.1f MiB\n%-36s %9.2f  %-16s %6.1f MiB\n",
				"  of which ip -batch (links)", x->sub[0], "",
				(double)x->sub_rss[0] / 1024, "  of which bridge -batch (fdb)",
				x->sub[1], "", (double)x->sub_rss[1] / 1024);
	}
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

static json_t *step_json(const struct cp_run *r, enum cp_step s)
{
	const struct cp_result *x = &r->step[s];
	double q = ratio_of(r, s);
	enum cp_step to = ratio_to(s);

	return json_pack("{s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o}", "name", cp_step_name(s),
			 "description", labels[s], "ran", x->ran, "exit_status",
			 x->ran ? json_integer(x->status) : json_null(), "seconds",
			 x->ran ? json_real(x->seconds) : json_null(), "peak_rss_kib",
			 x->ran ? json_integer(x->maxrss_kib) : json_null(), "ratio",
			 q >= 0 ? json_real(q) : json_null(), "ratio_to",
			 to == CP_N_STEPS ? json_null() : json_string(cp_step_name(to)));
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
	    json_object_set_new(root, "kernel_state",
				json_pack("{s:o, s:o, s:o, s:o, s:o}", "reference_built",
					  counts_json(&r->ref_built), "reference_after_delete",
					  counts_json(&r->ref_after), "fabricd_built",
					  counts_json(&r->fab_built), "fabricd_after_add",
					  counts_json(&r->fab_added), "fabricd_after_down",
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
