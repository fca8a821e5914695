// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * refreport.c - `fabricd bench --reference`: each path of fabricd's lab as a
 * ratio to the same path of the lab built by hand (bench/labref.c), as text
 * and as the JSON object "reference" (schemas/bench.schema.json).
 *
 * throughput: fabricd's median Gbit/s over the reference's (under 1: slower);
 * cpu_s_per_gb: fabricd's median CPU seconds per GB over the reference's
 * (over 1: each byte costs more). The runs of both labs are interleaved.
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

void bench_print_reference(const struct bench_results *r, const struct bench_summary *s,
			   const struct bench_summary *ref, FILE *f)
{
	char a[32], b[32], c[32], d[32];

	fprintf(f, "\nfabricd against the same lab built by hand (ip, bridge, wg; no guard, no "
		   "port isolation;\nruns interleaved): fabricd / reference, medians\n");
	fprintf(f, "%-7s %7s  %10s %10s %10s  %10s %10s %10s\n", "path", "streams", "Gbit/s",
		"reference", "ratio", "CPU s/GB", "reference", "ratio");
	for (size_t i = 0; i < r->n_cells && i < r->reference->n_cells; i++) {
		struct bench_ratio q;

		bench_ratio_of(&ref[i], &s[i], &q);
		fmt_median(a, sizeof(a), &s[i].gbps, 2);
		fmt_median(b, sizeof(b), &ref[i].gbps, 2);
		fmt_median(c, sizeof(c), &s[i].cpu_per_gb, 3);
		fmt_median(d, sizeof(d), &ref[i].cpu_per_gb, 3);
		fprintf(f, "%-7s %7u  %10s %10s %9.3fx  %10s %10s %9.3fx\n",
			bench_path_name(s[i].path), s[i].streams, a, b, q.gbps, c, d, q.cpu_per_gb);
	}
	fprintf(f, "Gbit/s ratio under 1: fabricd's lab is slower; CPU s/GB ratio over 1: each "
		   "byte costs more\nthere. Within 0.97..1.03 is what one host's run-to-run "
		   "spread allows.\n");
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

		bench_ratio_of(&ref[i], &s[i], &q);
		json_array_append_new(ratios, json_pack("{s:s, s:i, s:f, s:f, s:f}", "path",
							bench_path_name(s[i].path), "streams",
							(int)s[i].streams, "throughput", q.gbps,
							"cpu_s_per_gb", q.cpu_per_gb, "host_cpu",
							q.host_cpu));
	}
	return json_pack("{s:s, s:s, s:o, s:o}", "description",
			 "the same lab (namespaces, switch, veths, guests, MTUs, WireGuard "
			 "implementation) built by hand with iproute2 and wireguard-tools: no "
			 "guard table, no port isolation, no fabricd",
			 "implementation", x->implementation, "results", results,
			 "fabricd_vs_reference", ratios);
}
