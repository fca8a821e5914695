// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * profreport.c - --reference's netfilter profile as text and as the JSON
 * object "reference.profile": per path, netfilter's share of the host's
 * busy CPU in each lab and fabricd's own (its share minus the reference's,
 * pair by pair), against the same tolerance as the ratios.
 */
#include <stdio.h>

#include "bench/profile.h"

void bench_profile_path_of(const struct bench_profile *pr, enum bench_path path,
			   struct bench_profile_path *out)
{
	double fab[BENCH_PROFILE_MAX_PAIRS] = {0}, ref[BENCH_PROFILE_MAX_PAIRS] = {0};
	double own[BENCH_PROFILE_MAX_PAIRS] = {0};
	size_t n = 0, within = 0, outside = 0;

	*out = (struct bench_profile_path){0};
	for (size_t i = 0; i < pr->n_pairs && i < BENCH_PROFILE_MAX_PAIRS; i++) {
		const struct bench_profile_run *f = &pr->fabricd[path][i],
					       *r = &pr->reference[path][i];

		out->fabricd_samples += f->netfilter_samples;
		out->reference_samples += r->netfilter_samples;
		fab[n] = bench_profile_share(f);
		ref[n] = bench_profile_share(r);
		if (fab[n] < 0 || ref[n] < 0)
			continue;
		own[n] = fab[n] - ref[n];
		within += own[n] <= BENCH_REF_TOLERANCE * 100;
		outside += own[n] > BENCH_REF_TOLERANCE * 100;
		n++;
	}
	bench_stat_of(fab, n, &out->fabricd);
	bench_stat_of(ref, n, &out->reference);
	/* by hand: bench_stat_of skips values under 0, and a cheaper fabricd lab is one */
	for (size_t i = 1; i < n; i++) {
		double v = own[i];
		size_t j = i;

		for (; j > 0 && own[j - 1] > v; j--)
			own[j] = own[j - 1];
		own[j] = v;
	}
	if (n) {
		out->own = (struct bench_stat){.min = own[0], .max = own[n - 1], .n = n};
		out->own.median = n % 2 ? own[n / 2] : (own[n / 2 - 1] + own[n / 2]) / 2;
	}
	out->verdict = n && within == n	   ? BENCH_WITHIN
		       : n && outside == n ? BENCH_OUTSIDE
					   : BENCH_UNDECIDED;
}

void bench_print_profile(const struct bench_profile *pr, FILE *f)
{
	if (!pr->available) {
		fprintf(f, "\nnetfilter profile: not measured: %s\n", pr->reason);
		return;
	}
	fprintf(f,
		"\nnetfilter's share of the host's busy CPU, sampled by perf in %zu more run%s per "
		"path and\nlab (%u stream%s; kept out of the table above, as perf costs CPU "
		"itself); within %.0f%%:\nfabricd's own share at most %.0f%% in every pair\n",
		pr->n_pairs, pr->n_pairs == 1 ? "" : "s", pr->streams, pr->streams == 1 ? "" : "s",
		BENCH_REF_TOLERANCE * 100, BENCH_REF_TOLERANCE * 100);
	fprintf(f, "%-7s %8s %10s %14s %-15s  %s\n", "path", "fabricd", "reference",
		"fabricd's own", " min-max", "within?");
	for (int p = 0; p < BENCH_N_PATHS; p++) {
		struct bench_profile_path x;
		char range[32];

		bench_profile_path_of(pr, p, &x);
		snprintf(range, sizeof(range), " %.2f-%.2f", x.own.min, x.own.max);
		fprintf(f, "%-7s %7.2f%% %9.2f%% %13.2f%% %-15s  %s\n", bench_path_name(p),
			x.fabricd.median, x.reference.median, x.own.median, range,
			x.verdict == BENCH_WITHIN    ? "yes"
			: x.verdict == BENCH_OUTSIDE ? "no"
						     : "?");
	}
	fprintf(f, "fabricd's own: what its lab spends in netfilter's hooks and nf_tables (the "
		   "guard table)\nbeyond the reference, whose share is bridge netfilter's "
		   "calls into the hooks.\n");
}

static json_t *share_json(const struct bench_stat *st)
{
	return st->n ? json_pack("{s:f, s:f, s:f, s:i}", "median", st->median, "min", st->min,
				 "max", st->max, "n", (int)st->n)
		     : json_null();
}

json_t *bench_profile_json(const struct bench_profile *pr)
{
	json_t *paths = json_array();

	if (!pr->available)
		return json_pack("{s:b, s:s, s:o}", "available", 0, "reason", pr->reason, "paths",
				 paths);
	for (int p = 0; paths && p < BENCH_N_PATHS; p++) {
		struct bench_profile_path x;

		bench_profile_path_of(pr, p, &x);
		json_array_append_new(
		    paths,
		    json_pack("{s:s, s:o, s:o, s:o, s:I, s:I, s:s}", "path", bench_path_name(p),
			      "fabricd_pct", share_json(&x.fabricd), "reference_pct",
			      share_json(&x.reference), "own_pct", share_json(&x.own),
			      "fabricd_samples", (json_int_t)x.fabricd_samples, "reference_samples",
			      (json_int_t)x.reference_samples, "verdict",
			      bench_verdict_name(x.verdict)));
	}
	return json_pack("{s:b, s:n, s:s, s:i, s:i, s:i, s:o}", "available", 1, "reason", "method",
			 "perf record -a -e cpu-clock", "period_ns", BENCH_PROFILE_PERIOD_NS,
			 "streams", (int)pr->streams, "pairs", (int)pr->n_pairs, "paths", paths);
}
