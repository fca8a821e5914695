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
 * two be compared, and as the geometric mean of those pairs with its 95%
 * confidence interval (*_ci95), which decides whether fabricd's lab costs
 * at most BENCH_REF_TOLERANCE more than the reference (throughput no lower
 * than 1 - tolerance, CPU per GB no higher than 1 + tolerance; faster or
 * cheaper is no cost): "within", "outside", or "undecided" with the repeats
 * that would likely decide it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/profile.h"

/* More repeats than this: the ratio sits too close to a bound to tell. */
#define REPEATS_UNKNOWABLE 9999

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
 * same state of the host. Into v (BENCH_MAX_REPEAT), -1 where undefined;
 * the count.
 */
static size_t paired_ratios(const struct bench_cell *fab, const struct bench_cell *ref, bool cpu,
			    double *v)
{
	size_t n = 0;

	for (size_t j = 0; j < fab->n_runs && j < ref->n_runs && n < BENCH_MAX_REPEAT; j++) {
		double a = cpu ? run_cpu_per_gb(&fab->runs[j]) : fab->runs[j].gbps;
		double b = cpu ? run_cpu_per_gb(&ref->runs[j]) : ref->runs[j].gbps;

		v[n++] = a >= 0 && b > 0 ? a / b : -1;
	}
	return n;
}

static void paired(const struct bench_cell *fab, const struct bench_cell *ref, bool cpu,
		   struct bench_stat *out)
{
	double v[BENCH_MAX_REPEAT];

	bench_stat_of(v, paired_ratios(fab, ref, cpu, v), out);
}

double bench_t95(size_t df)
{
	static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				       2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
				       2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
				       2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
	size_t n = sizeof(table) / sizeof(table[0]);

	if (df == 0)
		return INFINITY;
	/* past the table, 1.96 + 2.4 / df is within 0.002 of the exact value */
	return df <= n ? table[df - 1] : 1.96 + 2.4 / (double)df;
}

void bench_ci_of(const double *ratios, size_t n, struct bench_ci *out)
{
	double sum = 0, sq = 0, m, half;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (ratios[i] > 0) {
			sum += log(ratios[i]);
			k++;
		}
	}
	if (!k)
		return;
	m = sum / (double)k;
	for (size_t i = 0; i < n; i++) {
		if (ratios[i] > 0)
			sq += (log(ratios[i]) - m) * (log(ratios[i]) - m);
	}
	out->n = k;
	out->mean = exp(m);
	out->log_sd = k > 1 ? sqrt(sq / (double)(k - 1)) : 0;
	half = k > 1 ? bench_t95(k - 1) * out->log_sd / sqrt((double)k) : 0;
	out->low = exp(m - half);
	out->high = exp(m + half);
}

/* The bound a cost may not pass: 1 - tolerance below, 1 + tolerance above. */
static double cost_bound(double tolerance, enum bench_worse worse)
{
	return worse == BENCH_WORSE_LOWER ? 1 - tolerance : 1 + tolerance;
}

enum bench_verdict bench_ci_verdict(const struct bench_ci *ci, double tolerance,
				    enum bench_worse worse)
{
	double bound = cost_bound(tolerance, worse);

	if (ci->n < 2)
		return BENCH_UNDECIDED;
	if (worse == BENCH_WORSE_LOWER ? ci->low >= bound : ci->high <= bound)
		return BENCH_WITHIN;
	if (worse == BENCH_WORSE_LOWER ? ci->high < bound : ci->low > bound)
		return BENCH_OUTSIDE;
	return BENCH_UNDECIDED;
}

/*
 * The interval's half width shrinks with the square root of the pairs: it
 * decides once it is narrower than the distance from the mean to the bound
 * (t taken as 2, its value for many pairs).
 */
size_t bench_ci_pairs_needed(const struct bench_ci *ci, double tolerance, enum bench_worse worse)
{
	double margin, need;

	if (ci->n < 2 || bench_ci_verdict(ci, tolerance, worse) != BENCH_UNDECIDED)
		return 0;
	margin = fabs(log(ci->mean) - log(cost_bound(tolerance, worse)));
	if (margin < 1e-6)
		return SIZE_MAX;
	need = ceil(pow(2.0 * ci->log_sd / margin, 2));
	if (need >= (double)SIZE_MAX)
		return SIZE_MAX;
	return need > (double)ci->n ? (size_t)need : ci->n + 1;
}

/* "0.981x 0.962-1.000", "0.981x (1 pair)" or "-" */
static void fmt_ci(char *buf, size_t len, const struct bench_ci *ci)
{
	if (!ci->n)
		snprintf(buf, len, "-");
	else if (ci->n == 1)
		snprintf(buf, len, "%.3fx (1 pair)", ci->mean);
	else
		snprintf(buf, len, "%.3fx %.3f-%.3f", ci->mean, ci->low, ci->high);
}

/* Both metrics must lie within for "yes"; either outside is "no". */
static enum bench_verdict row_verdict(const struct bench_ci *gbps, const struct bench_ci *cpu)
{
	enum bench_verdict a = bench_ci_verdict(gbps, BENCH_REF_TOLERANCE, BENCH_WORSE_LOWER);
	enum bench_verdict b = bench_ci_verdict(cpu, BENCH_REF_TOLERANCE, BENCH_WORSE_HIGHER);

	if (a == BENCH_OUTSIDE || b == BENCH_OUTSIDE)
		return BENCH_OUTSIDE;
	return a == BENCH_WITHIN && b == BENCH_WITHIN ? BENCH_WITHIN : BENCH_UNDECIDED;
}

static size_t row_pairs_needed(const struct bench_ci *gbps, const struct bench_ci *cpu)
{
	size_t a = bench_ci_pairs_needed(gbps, BENCH_REF_TOLERANCE, BENCH_WORSE_LOWER);
	size_t b = bench_ci_pairs_needed(cpu, BENCH_REF_TOLERANCE, BENCH_WORSE_HIGHER);

	return a > b ? a : b;
}

const char *bench_verdict_name(enum bench_verdict v)
{
	return v == BENCH_WITHIN ? "within" : v == BENCH_OUTSIDE ? "outside" : "undecided";
}

static void fmt_verdict(char *buf, size_t len, const struct bench_ci *gbps,
			const struct bench_ci *cpu)
{
	enum bench_verdict v = row_verdict(gbps, cpu);
	size_t need = row_pairs_needed(gbps, cpu);

	if (v == BENCH_WITHIN)
		snprintf(buf, len, "yes");
	else if (v == BENCH_OUTSIDE)
		snprintf(buf, len, "no");
	else if (gbps->n < 2 || cpu->n < 2)
		snprintf(buf, len, "? (needs --repeat 2 or more)");
	else if (need > REPEATS_UNKNOWABLE)
		snprintf(buf, len, "? (too close to the bound to tell)");
	else if (need > BENCH_MAX_REPEAT)
		snprintf(buf, len, "? (about %zu repeats, over --repeat's %d)", need,
			 BENCH_MAX_REPEAT);
	else
		snprintf(buf, len, "? (about --repeat %zu)", need);
}

/* A cell's paired ratios of both metrics. */
static void cell_cis(const struct bench_cell *fab, const struct bench_cell *ref,
		     struct bench_ci *gbps, struct bench_ci *cpu)
{
	double v[BENCH_MAX_REPEAT];
	size_t n = paired_ratios(fab, ref, false, v);

	bench_ci_of(v, n, gbps);
	n = paired_ratios(fab, ref, true, v);
	bench_ci_of(v, n, cpu);
}

void bench_print_reference(const struct bench_results *r, const struct bench_summary *s,
			   const struct bench_summary *ref, FILE *f)
{
	char a[32], b[32], c[32], d[32], q1[48], q2[48], verdict[48];

	fprintf(f,
		"\nfabricd against the same lab built by hand (ip, bridge, wg; no guard, no "
		"port isolation),\nruns interleaved: medians; fabricd / reference as the "
		"geometric mean of the run-by-run\nratios with its 95%% confidence interval; "
		"within %.0f%%: fabricd costs at most %.0f%%, the Gbit/s\ninterval over %.2f and "
		"the CPU s/GB interval under %.2f\n",
		BENCH_REF_TOLERANCE * 100, BENCH_REF_TOLERANCE * 100, 1 - BENCH_REF_TOLERANCE,
		1 + BENCH_REF_TOLERANCE);
	fprintf(f, "%-7s %7s  %8s %9s %-19s  %8s %9s %-19s  %s\n", "path", "streams", "Gbit/s",
		"reference", "ratio, 95% CI", "CPU s/GB", "reference", "ratio, 95% CI", "within?");
	for (size_t i = 0; i < r->n_cells && i < r->reference->n_cells; i++) {
		struct bench_ci tg, tc;

		cell_cis(&r->cells[i], &r->reference->cells[i], &tg, &tc);
		fmt_median(a, sizeof(a), &s[i].gbps, 2);
		fmt_median(b, sizeof(b), &ref[i].gbps, 2);
		fmt_median(c, sizeof(c), &s[i].cpu_per_gb, 3);
		fmt_median(d, sizeof(d), &ref[i].cpu_per_gb, 3);
		fmt_ci(q1, sizeof(q1), &tg);
		fmt_ci(q2, sizeof(q2), &tc);
		fmt_verdict(verdict, sizeof(verdict), &tg, &tc);
		fprintf(f, "%-7s %7u  %8s %9s %-19s  %8s %9s %-19s  %s\n",
			bench_path_name(s[i].path), s[i].streams, a, b, q1, c, d, q2, verdict);
	}
	fprintf(f, "Gbit/s ratio under 1: fabricd's lab is slower; CPU s/GB ratio over 1: each "
		   "byte costs more\nthere. \"?\": the host's noise leaves the interval across a "
		   "bound; more repeats narrow it.\n");
	bench_print_profile(&r->profile, f);
}

static json_t *ci_json(const struct bench_ci *ci, enum bench_worse worse)
{
	if (ci->n < 2)
		return json_null();
	return json_pack("{s:f, s:f, s:f, s:i, s:s}", "mean", ci->mean, "low", ci->low, "high",
			 ci->high, "n", (int)ci->n, "verdict",
			 bench_verdict_name(bench_ci_verdict(ci, BENCH_REF_TOLERANCE, worse)));
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
		struct bench_ci cg, cc;
		size_t need;
		json_t *o;

		bench_ratio_of(&ref[i], &s[i], &q);
		paired(&r->cells[i], &x->cells[i], false, &tg);
		paired(&r->cells[i], &x->cells[i], true, &tc);
		cell_cis(&r->cells[i], &x->cells[i], &cg, &cc);
		need = row_pairs_needed(&cg, &cc);
		o = json_pack("{s:s, s:i, s:f, s:f, s:f, s:o, s:o, s:o, s:o, s:s}", "path",
			      bench_path_name(s[i].path), "streams", (int)s[i].streams,
			      "throughput", q.gbps, "cpu_s_per_gb", q.cpu_per_gb, "host_cpu",
			      q.host_cpu, "throughput_paired", ratio_json(&tg),
			      "cpu_s_per_gb_paired", ratio_json(&tc), "throughput_ci95",
			      ci_json(&cg, BENCH_WORSE_LOWER), "cpu_s_per_gb_ci95",
			      ci_json(&cc, BENCH_WORSE_HIGHER), "verdict",
			      bench_verdict_name(row_verdict(&cg, &cc)));
		if (o && need)
			json_object_set_new(o, "repeats_needed",
					    need > REPEATS_UNKNOWABLE
						? json_null()
						: json_integer((json_int_t)need));
		json_array_append_new(ratios, o);
	}
	return json_pack("{s:s, s:s, s:f, s:o, s:o, s:o}", "description",
			 "the same lab (namespaces, switch, veths, guests, MTUs, WireGuard "
			 "implementation) built by hand with iproute2 and wireguard-tools: no "
			 "guard table, no port isolation, no fabricd",
			 "implementation", x->implementation, "tolerance", BENCH_REF_TOLERANCE,
			 "results", results, "fabricd_vs_reference", ratios, "profile",
			 bench_profile_json(&r->profile));
}
