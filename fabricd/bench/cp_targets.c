// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/cp_targets.c - issue 17's targets for the control plane, each judged
 * against this run: the value, its bound, met or not (not measured when a
 * step did not run). Printed under the table and written to the JSON
 * ("targets"), so that one run says whether it met them, not the reader.
 * The bounds are the issue's, at any size: at --quick the build is too
 * short for the shares to mean much, and the table says so.
 */
#include <jansson.h>
#include <stdio.h>

#include "bench/control_plane.h"

/* Growth over the reloads that still counts as flat: RSS samples move by a few hundred KiB. */
#define FLAT_KIB 1024

struct target {
	const char *name, *text; /* JSON name, words for people */
	double value, bound;
	bool measured, inclusive; /* inclusive: value == bound meets it */
	const char *unit;	  /* "x", "%" (value a fraction) or "MiB" */
};

static void set_ratio(struct target *t, double q)
{
	t->measured = q >= 0;
	t->value = q;
}

static void set_kib(struct target *t, long kib)
{
	t->measured = kib > 0;
	t->value = (double)kib / 1024;
}

#define N_TARGETS 9

static void fill(const struct cp_run *r, struct target t[N_TARGETS])
{
	const struct cp_daemon *d = &r->daemon;
	const struct cp_result *build = &r->step[CP_BUILD];

	t[0] = (struct target){"build", "build from empty, against iproute2's", 0, 1.0, false, true,
			       "x"};
	set_ratio(&t[0], cp_ratio_of(r, CP_BUILD));
	t[1] = (struct target){
	    "build_peak_rss", "build from empty, peak RSS", 0, 32, false, false, "MiB"};
	set_kib(&t[1], build->ran ? build->maxrss_kib : 0);
	t[2] = (struct target){
	    "plan_noop", "plan with nothing to do, of the build", 0, 0.10, false, false, "%"};
	set_ratio(&t[2], cp_ratio_of(r, CP_PLAN));
	t[3] = (struct target){
	    "apply_noop", "apply with nothing to do, of the build", 0, 0.10, false, false, "%"};
	set_ratio(&t[3], cp_ratio_of(r, CP_NOOP));
	t[4] = (struct target){"apply_add_vnet",
			       "apply after adding one vnet, of the build",
			       0,
			       0.10,
			       false,
			       false,
			       "%"};
	set_ratio(&t[4], cp_ratio_of(r, CP_ADD_VNET));
	t[5] = (struct target){"down", "down, against iproute2's link deletes", 0, 0.5, false, true,
			       "x"};
	set_ratio(&t[5], cp_ratio_of(r, CP_DOWN));
	t[6] = (struct target){
	    "daemon_add_vnet", "the daemon's one vnet, of the build", 0, 0.02, false, true, "%"};
	set_ratio(&t[6], cp_daemon_ratio(r));
	t[7] = (struct target){
	    "daemon_rss", "the daemon's RSS after the reloads", 0, 8, false, false, "MiB"};
	set_kib(&t[7], d->rss_after_reloads_kib);
	t[8] = (struct target){"daemon_rss_flat",
			       "the daemon's RSS growth over the reloads",
			       0,
			       (double)FLAT_KIB / 1024,
			       false,
			       false,
			       "MiB"};
	t[8].measured = d->rss_before_reloads_kib > 0 && d->rss_after_reloads_kib > 0;
	t[8].value = (double)(d->rss_after_reloads_kib - d->rss_before_reloads_kib) / 1024;
}

static bool met(const struct target *t)
{
	return t->inclusive ? t->value <= t->bound : t->value < t->bound;
}

static void value_text(const struct target *t, double v, char *out, size_t len)
{
	if (t->unit[0] == '%')
		snprintf(out, len, "%.1f %%", 100 * v);
	else if (t->unit[0] == 'x')
		snprintf(out, len, "%.2fx", v);
	else
		snprintf(out, len, "%.1f MiB", v);
}

void cp_print_targets(const struct cp_run *r, FILE *f)
{
	struct target t[N_TARGETS];
	unsigned int n_met = 0, n_measured = 0;
	char value[32], bound[32];

	fill(r, t);
	for (int i = 0; i < N_TARGETS; i++) {
		n_measured += t[i].measured;
		n_met += t[i].measured && met(&t[i]);
	}
	fprintf(f, "\ntargets (issue 17): %u of %u met%s%s\n", n_met, N_TARGETS,
		n_measured < N_TARGETS ? ", some not measured" : "",
		r->o.quick ? " (--quick: too small a build for the shares to mean much)" : "");
	for (int i = 0; i < N_TARGETS; i++) {
		value_text(&t[i], t[i].value, value, sizeof(value));
		value_text(&t[i], t[i].bound, bound, sizeof(bound));
		fprintf(f, "  %-44s %12s  %s %-9s %s\n", t[i].text, t[i].measured ? value : "-",
			t[i].inclusive ? "<=" : "< ", bound,
			!t[i].measured ? "not measured"
			: met(&t[i])   ? "met"
				       : "NOT MET");
	}
}

json_t *cp_targets_json(const struct cp_run *r)
{
	struct target t[N_TARGETS];
	json_t *a = json_array();

	fill(r, t);
	for (int i = 0; a && i < N_TARGETS; i++) {
		json_t *o = json_pack(
		    "{s:s, s:s, s:o, s:f, s:s, s:b, s:o}", "name", t[i].name, "description",
		    t[i].text, "value", t[i].measured ? json_real(t[i].value) : json_null(),
		    "bound", t[i].bound, "unit", t[i].unit[0] == '%' ? "fraction" : t[i].unit,
		    "inclusive", t[i].inclusive, "met",
		    t[i].measured ? json_boolean(met(&t[i])) : json_null());

		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}
