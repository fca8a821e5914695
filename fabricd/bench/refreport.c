// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * refreport.c - `fabricd bench --reference`: each path of fabricd's lab as a
 * ratio to the same path of the lab built by hand (bench/labref.c), as text
 * and as the JSON object "reference" (schemas/bench.schema.json).
 *
 * throughput: fabricd's median Gbit/s over the reference's (under 1: slower);
 * cpu_s_per_gb: fabricd's median CPU seconds per GB over the reference's
 * (over 1: each byte costs more). The runs of both labs are interleaved, so
 * the ratios are also given run by run (*_paired: each fabricd run over the
 * reference run next to it), whose range shows how far the host let the
 * two be compared.
 */
#include <stdio.h>

#include "bench/bench.h"

static void fmt_median(char *buf, size_t len, const struct bench_stat *st, int prec)
{
	if (st->n)
		snprintf(buf, len, "%.*f", prec, st->median);
	else
		snprintf(buf, len, "-");
}

static double run_cpu_per_gb(const struct bench_run *run)
{
	return run->bytes > 0 ? run->cpu_seconds / (run->bytes / 1e9) : -1;
}

/*
 * fabricd over reference, run by run: the j-th run of a cell on one lab
 * was measured right next to the j-th on the other, so each pair saw the
 * same state of the host. The median and range of those ratios.
 */
static void paired(const struct bench_cell *fab, const struct bench_cell *ref, bool cpu,
		   struct bench_stat *out)
{
	double v[BENCH_MAX_REPEAT];
	size_t n = 0;

	for (size_t j = 0; j < fab->n_runs && j < ref->n_runs && n < BENCH_MAX_REPEAT; j++) {
		double a = cpu ? run_cpu_per_gb(&fab->runs[j]) : fab->runs[j].gbps;
		double b = cpu ? run_cpu_per_gb(&ref->runs[j]) : ref->runs[j].gbps;

		v[n++] = a >= 0 && b > 0 ? a / b : -1;
	}
	bench_stat_of(v, n, out);
}

static void fmt_ratio(char *buf, size_t len, const struct bench_stat *st)
{
	if (!st->n)
		snprintf(buf, len, "-");
	else if (st->n == 1)
		snprintf(buf, len, "%.3fx", st->median);
	else
		snprintf(buf, len, "%.3fx ±%.3f", st->median, (st->max - st->min) / 2);
}

void bench_print_reference(const struct bench_results *r, const struct bench_summary *s,
			   const struct bench_summary *ref, FILE *f)
{
	char a[32], b[32], c[32], d[32], q1[40], q2[40];

	fprintf(f, "\nfabricd against the same lab built by hand (ip, bridge, wg; no guard, no "
		   "port isolation),\nruns interleaved: medians, and fabricd / reference run by "
		   "run (± half the range)\n");
	fprintf(f, "%-7s %7s  %8s %9s %-15s  %8s %9s %s\n", "path", "streams", "Gbit/s",
		"reference", "ratio", "CPU s/GB", "reference", "ratio");
	for (size_t i = 0; i < r->n_cells && i < r->reference->n_cells; i++) {
		struct bench_stat tg, tc;

		paired(&r->cells[i], &r->reference->cells[i], false, &tg);
		paired(&r->cells[i], &r->reference->cells[i], true, &tc);
		fmt_median(a, sizeof(a), &s[i].gbps, 2);
		fmt_median(b, sizeof(b), &ref[i].gbps, 2);
		fmt_median(c, sizeof(c), &s[i].cpu_per_gb, 3);
		fmt_median(d, sizeof(d), &ref[i].cpu_per_gb, 3);
		fmt_ratio(q1, sizeof(q1), &tg);
		fmt_ratio(q2, sizeof(q2), &tc);
		fprintf(f, "%-7s %7u  %8s %9s %-15s  %8s %9s %s\n", bench_path_name(s[i].path),
			s[i].streams, a, b, q1, c, d, q2);
	}
	fprintf(f, "Gbit/s ratio under 1: fabricd's lab is slower; CPU s/GB ratio over 1: each "
		   "byte costs more\nthere. A spread wider than the distance from 1 means the "
		   "host was too busy to tell.\n");
}

static json_t *ratio_json(const struct bench_stat *st)
{
	return st->n ? json_pack("{s:f, s:f, s:f, s:i}", "median", st->median, "min", st->min,
				 "max", st->max, "n", (int)st->n)
		     : json_null();
}

json_t *bench_reference_json(const struct bench_results *r, const struct bench_summary *s,
			     const struct bench_summary *ref)
{
	const struct bench_results *x = r->reference;
	json_t *results = json_array(), *ratios = json_array();

	for (size_t i = 0; results && i < x->n_cells; i++)
		json_array_append_new(results, bench_result_json(&x->cells[i], &ref[i]));
	for (size_t i = 0; ratios && i < r->n_cells && i < x->n_cells; i++) {
		struct bench_ratio q;
		struct bench_stat tg, tc;

		bench_ratio_of(&ref[i], &s[i], &q);
		paired(&r->cells[i], &x->cells[i], false, &tg);
		paired(&r->cells[i], &x->cells[i], true, &tc);
		json_array_append_new(
		    ratios, json_pack("{s:s, s:i, s:f, s:f, s:f, s:o, s:o}", "path",
				      bench_path_name(s[i].path), "streams", (int)s[i].streams,
				      "throughput", q.gbps, "cpu_s_per_gb", q.cpu_per_gb,
				      "host_cpu", q.host_cpu, "throughput_paired", ratio_json(&tg),
				      "cpu_s_per_gb_paired", ratio_json(&tc)));
	}
	return json_pack("{s:s, s:s, s:o, s:o}", "description",
			 "the same lab (namespaces, switch, veths, guests, MTUs, WireGuard "
			 "implementation) built by hand with iproute2 and wireguard-tools: no "
			 "guard table, no port isolation, no fabricd",
			 "implementation", x->implementation, "results", results,
			 "fabricd_vs_reference", ratios);
}
