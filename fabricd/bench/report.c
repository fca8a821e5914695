// SPDX-License-Identifier: GPL-2.0-or-later
/* report.c - results, medians and spread, the text table and the JSON report. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

static const char *const path_names[BENCH_N_PATHS] = {"raw", "plain", "secure"};

static const char *const path_descriptions[BENCH_N_PATHS] = {
    "node to node over the underlay, no overlay (the reference)",
    "guest to guest over plain VXLAN (UDP 4789 on the underlay)",
    "guest to guest over VXLAN inside WireGuard (UDP 4790 in the fabric)",
};

const char *bench_path_name(enum bench_path p)
{
	return p < BENCH_N_PATHS ? path_names[p] : "?";
}

size_t bench_cell_index(size_t stream_idx, enum bench_path path)
{
	return stream_idx * BENCH_N_PATHS + (size_t)path;
}

int bench_results_init(struct bench_results *r)
{
	r->n_cells = r->n_streams * BENCH_N_PATHS;
	r->cells = calloc(r->n_cells ? r->n_cells : 1, sizeof(*r->cells));
	if (!r->cells)
		return -ENOMEM;
	for (size_t s = 0; s < r->n_streams; s++) {
		for (int p = 0; p < BENCH_N_PATHS; p++) {
			struct bench_cell *c = &r->cells[bench_cell_index(s, p)];

			c->path = p;
			c->streams = r->streams[s];
			c->runs = calloc(r->repeat ? r->repeat : 1, sizeof(*c->runs));
			if (!c->runs)
				return -ENOMEM; /* bench_results_free() releases the rest */
		}
	}
	return 0;
}

int bench_cell_add(struct bench_cell *c, size_t capacity, struct bench_run *run)
{
	if (c->n_runs >= capacity)
		return -ENOSPC;
	c->runs[c->n_runs++] = *run;
	run->cpu = NULL;
	return 0;
}

void bench_results_free(struct bench_results *r)
{
	for (size_t i = 0; r->cells && i < r->n_cells; i++) {
		for (size_t j = 0; j < r->cells[i].n_runs; j++)
			free(r->cells[i].runs[j].cpu);
		free(r->cells[i].runs);
	}
	free(r->cells);
	free(r->hist.buckets);
	if (r->reference) {
		bench_results_free(r->reference);
		free(r->reference);
		r->reference = NULL;
	}
	r->cells = NULL;
	r->hist.buckets = NULL;
	r->n_cells = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_stat_of(const double *v, size_t n, struct bench_stat *out)
{
	double sorted[BENCH_MAX_REPEAT];
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n && k < BENCH_MAX_REPEAT; i++) {
		if (v[i] >= 0)
			sorted[k++] = v[i];
	}
	if (!k)
		return;
	qsort(sorted, k, sizeof(*sorted), cmp_double);
	out->n = k;
	out->min = sorted[0];
	out->max = sorted[k - 1];
	out->median = k % 2 ? sorted[k / 2] : (sorted[k / 2 - 1] + sorted[k / 2]) / 2;
}

/* CPU seconds per 10^9 payload bytes; -1 when nothing was moved. */
static double cpu_per_gb(const struct bench_run *run)
{
	return run->bytes > 0 ? run->cpu_seconds / (run->bytes / 1e9) : -1;
}

#define STAT_FIELD(cell, field, out)                                                               \
	do {                                                                                       \
		double v_[BENCH_MAX_REPEAT];                                                       \
		size_t n_ = (cell)->n_runs < BENCH_MAX_REPEAT ? (cell)->n_runs : BENCH_MAX_REPEAT; \
		for (size_t i_ = 0; i_ < n_; i_++)                                                 \
			v_[i_] = (cell)->runs[i_].field;                                           \
		bench_stat_of(v_, n_, (out));                                                      \
	} while (0)

/* Per-CPU medians over the runs of a cell. */
static int per_cpu_medians(const struct bench_cell *c, struct bench_summary *s)
{
	unsigned int n_cpu = 0;

	for (size_t i = 0; i < c->n_runs; i++) {
		if (c->runs[i].n_cpu > n_cpu)
			n_cpu = c->runs[i].n_cpu;
	}
	if (!n_cpu)
		return 0;
	s->cpu = calloc(n_cpu, sizeof(*s->cpu));
	if (!s->cpu)
		return -ENOMEM;
	s->n_cpu = n_cpu;
	for (unsigned int k = 0; k < n_cpu; k++) {
		/* fields of struct bench_cpu, all doubles, in order */
		for (size_t f = 0; f < sizeof(struct bench_cpu) / sizeof(double); f++) {
			double v[BENCH_MAX_REPEAT];
			struct bench_stat st;
			size_t n = 0;

			for (size_t i = 0; i < c->n_runs && n < BENCH_MAX_REPEAT; i++) {
				if (k < c->runs[i].n_cpu)
					v[n++] = ((const double *)&c->runs[i].cpu[k])[f];
			}
			bench_stat_of(v, n, &st);
			((double *)&s->cpu[k])[f] = st.median;
		}
	}
	return 0;
}

/* The CPU with the largest share of one per-CPU rate; false when below the threshold. */
static bool top_share(const struct bench_summary *s, size_t offset, int *cpu, double *share)
{
	double total = 0, top = -1;

	*cpu = -1;
	*share = 0;
	for (unsigned int k = 0; k < s->n_cpu; k++) {
		double v = *(const double *)((const char *)&s->cpu[k] + offset);

		total += v;
		if (v > top) {
			top = v;
			*cpu = (int)k;
		}
	}
	if (total <= 0)
		return false;
	*share = 100.0 * top / total;
	return s->n_cpu > 1 && total >= BENCH_HOTSPOT_MIN_RATE && *share >= BENCH_HOTSPOT_SHARE;
}

static void find_hotspot(struct bench_summary *s)
{
	int cpu;
	double share;

	/* device interrupts first: a NIC's queues on one core is the classic case */
	if (top_share(s, offsetof(struct bench_cpu, irqs), &cpu, &share)) {
		s->hotspot = true;
		s->hot_what = "device interrupts";
	} else {
		s->hotspot = top_share(s, offsetof(struct bench_cpu, net_rx), &cpu, &share);
		s->hot_what = "NET_RX softirqs";
	}
	s->hot_cpu = cpu;
	s->hot_share = share;
}

struct bench_summary *bench_summarize(const struct bench_results *r)
{
	struct bench_summary *all = calloc(r->n_cells ? r->n_cells : 1, sizeof(*all));

	if (!all)
		return NULL;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct bench_cell *c = &r->cells[i];
		struct bench_summary *s = &all[i];
		double v[BENCH_MAX_REPEAT];
		size_t n = c->n_runs < BENCH_MAX_REPEAT ? c->n_runs : BENCH_MAX_REPEAT;

		s->path = c->path;
		s->streams = c->streams;
		STAT_FIELD(c, gbps, &s->gbps);
		STAT_FIELD(c, host_cpu_pct, &s->host_cpu);
		STAT_FIELD(c, ctxt_per_s, &s->ctxt);
		STAT_FIELD(c, wg_cpu_pct, &s->wg_cpu);
		STAT_FIELD(c, retransmits, &s->retransmits);
		STAT_FIELD(c, usr_pct, &s->usr);
		STAT_FIELD(c, sys_pct, &s->sys);
		STAT_FIELD(c, softirq_pct, &s->softirq);
		STAT_FIELD(c, irq_pct, &s->irq);
		for (size_t j = 0; j < n; j++)
			v[j] = cpu_per_gb(&c->runs[j]);
		bench_stat_of(v, n, &s->cpu_per_gb);
		if (per_cpu_medians(c, s) < 0) {
			bench_summaries_free(all, r->n_cells);
			return NULL;
		}
		find_hotspot(s);
	}
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct bench_summary *raw = &all[i - (size_t)all[i].path];

		all[i].pct_of_raw = raw->gbps.n && raw->gbps.median > 0 && all[i].gbps.n
					? 100.0 * all[i].gbps.median / raw->gbps.median
					: -1;
	}
	return all;
}

void bench_summaries_free(struct bench_summary *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].cpu);
	free(s);
}

static double ratio(const struct bench_stat *num, const struct bench_stat *den)
{
	return num->n && den->n && den->median > 0 ? num->median / den->median : 0;
}

void bench_ratio_of(const struct bench_summary *plain, const struct bench_summary *secure,
		    struct bench_ratio *out)
{
	out->streams = plain->streams;
	out->gbps = ratio(&secure->gbps, &plain->gbps);
	out->host_cpu = ratio(&secure->host_cpu, &plain->host_cpu);
	out->cpu_per_gb = ratio(&secure->cpu_per_gb, &plain->cpu_per_gb);
	out->ctxt = ratio(&secure->ctxt, &plain->ctxt);
}

/* --- text ----------------------------------------------------------------- */

/* "12.3k" style for large rates */
static void fmt_rate(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

/* "median ±half-range" with prec decimals; "-" when not measured. */
static void fmt_stat(char *buf, size_t len, const struct bench_stat *st, int prec, bool rate)
{
	char m[32], h[32];

	if (!st->n) {
		snprintf(buf, len, "-");
		return;
	}
	if (rate) {
		fmt_rate(m, sizeof(m), st->median);
		fmt_rate(h, sizeof(h), (st->max - st->min) / 2);
	} else {
		snprintf(m, sizeof(m), "%.*f", prec, st->median);
		snprintf(h, sizeof(h), "%.*f", prec, (st->max - st->min) / 2);
	}
	if (st->n > 1)
		snprintf(buf, len, "%s ±%s", m, h);
	else
		snprintf(buf, len, "%s", m);
}

static void print_header(const struct bench_results *r, FILE *f)
{
	fprintf(f,
		"fabricd bench: %zu stream count%s x 3 paths x %u repeat%s, %u s per run, "
		"%u CPU%s, kernel %s%s\n",
		r->n_streams, r->n_streams == 1 ? "" : "s", r->repeat, r->repeat == 1 ? "" : "s",
		r->duration, r->n_cpu, r->n_cpu == 1 ? "" : "s", r->kernel,
		r->quick ? " (quick mode: structure, not precision)" : "");
	fprintf(f, "WireGuard measured: %s backend, %s\n", r->backend, r->implementation);
	fprintf(f,
		"MTU: underlay %u, fabric %u, guests %u in both zones (VNI %u plain, %u secure)\n",
		r->underlay_mtu, r->fabric_mtu, r->zone_mtu, r->plain_vni, r->secure_vni);
	if (r->busy_before >= 0)
		fprintf(f, "Host before the bench: %.1f%% busy%s\n", r->busy_before,
			r->busy_before > BENCH_BUSY_WARN
			    ? ": WARNING: other work on this host skews every figure below; run "
			      "the bench on an idle host"
			    : " (idle enough)");
	fprintf(f,
		"Both ends of every path run on this host: CPU is sender + receiver together.\n"
		"Figures are medians over the repeats; ± is half the range (max - min) / 2.\n\n");
}

/* text in width display columns (UTF-8 aware: "±" is one column), then sep spaces */
static void col(FILE *f, const char *text, int width, bool right, int sep)
{
	int n = 0;

	for (const char *p = text; *p; p++)
		n += ((unsigned char)*p & 0xc0) != 0x80;
	if (right)
		fprintf(f, "%*s", width > n ? width - n : 0, "");
	fputs(text, f);
	if (!right)
		fprintf(f, "%*s", width > n ? width - n : 0, "");
	fprintf(f, "%*s", sep, "");
}

static void print_main(const struct bench_results *r, const struct bench_summary *s, FILE *f)
{
	static const int w[] = {7, 7, 14, 6, 13, 16, 14};
	char v[7][80];

	col(f, "path", w[0], false, 1);
	col(f, "streams", w[1], true, 2);
	col(f, "Gbit/s", w[2], false, 1);
	col(f, "% raw", w[3], true, 2);
	col(f, "host CPU %", w[4], false, 1);
	col(f, "CPU s/GB", w[5], false, 1);
	col(f, "ctxsw/s", w[6], false, 1);
	fprintf(f, "WG proc CPU %%\n");
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct bench_summary *x = &s[i];

		snprintf(v[0], sizeof(v[0]), "%s", bench_path_name(x->path));
		snprintf(v[1], sizeof(v[1]), "%u", x->streams);
		fmt_stat(v[2], sizeof(v[2]), &x->gbps, 2, false);
		if (x->pct_of_raw >= 0)
			snprintf(v[3], sizeof(v[3]), "%.1f", x->pct_of_raw);
		else
			snprintf(v[3], sizeof(v[3]), "-");
		fmt_stat(v[4], sizeof(v[4]), &x->host_cpu, 1, false);
		fmt_stat(v[5], sizeof(v[5]), &x->cpu_per_gb, 3, false);
		fmt_stat(v[6], sizeof(v[6]), &x->ctxt, 0, true);
		col(f, v[0], w[0], false, 1);
		col(f, v[1], w[1], true, 2);
		col(f, v[2], w[2], false, 1);
		col(f, v[3], w[3], true, 2);
		for (int k = 4; k < 7; k++)
			col(f, v[k], w[k], false, 1);
		fmt_stat(v[0], sizeof(v[0]), &x->wg_cpu, 1, false);
		fprintf(f, "%s\n", v[0]);
		if (x->path == BENCH_SECURE && i + 1 < r->n_cells)
			fputc('\n', f);
	}
	fprintf(f, "\nGbit/s: iperf3 payload received. %% raw: of the raw underlay at the same "
		   "stream count.\nhost CPU %%: busy share of all CPUs (100 = every CPU busy). "
		   "CPU s/GB: busy CPU seconds\nof the whole host per 10^9 bytes moved (sender, "
		   "receiver and WireGuard together).\nctxsw/s: context switches per second, "
		   "host. WG proc CPU %%: the WireGuard processes\nof both nodes (100 = one CPU; "
		   "- when WireGuard is in the kernel).\n");
}

static void print_cpu(const struct bench_results *r, const struct bench_summary *s, FILE *f)
{
	fprintf(f, "\nCPU time by kind (percent of all CPUs' time, medians) and where the network "
		   "work ran:\n");
	fprintf(f, "%-7s %7s  %5s %5s %5s %5s  %-13s %-15s %8s  %s\n", "path", "streams", "usr",
		"sys", "soft", "irq", "busiest CPU", "NET_RX top CPU", "retrans", "hotspot");
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct bench_summary *x = &s[i];
		char bus[24] = "-", rx[24] = "-", hot[96] = "no";
		int busiest = -1;
		double top = -1;

		for (unsigned int k = 0; k < x->n_cpu; k++) {
			if (x->cpu[k].busy > top) {
				top = x->cpu[k].busy;
				busiest = (int)k;
			}
		}
		if (busiest >= 0)
			snprintf(bus, sizeof(bus), "cpu%d %.0f%%", busiest, top);
		if (x->hot_cpu >= 0 && x->hot_share > 0)
			snprintf(rx, sizeof(rx), "cpu%d %.0f%%", x->hot_cpu, x->hot_share);
		if (x->hotspot)
			snprintf(hot, sizeof(hot), "YES: cpu%d takes %.0f%% of the %s", x->hot_cpu,
				 x->hot_share, x->hot_what);
		fprintf(f, "%-7s %7u  %5.1f %5.1f %5.1f %5.1f  %-13s %-15s %8.0f  %s\n",
			bench_path_name(x->path), x->streams, x->usr.median, x->sys.median,
			x->softirq.median, x->irq.median, bus, rx, x->retransmits.median, hot);
	}
	fprintf(f,
		"A hotspot is one CPU taking %.0f%% or more of the NET_RX softirqs or device "
		"interrupts\n(at %.0f/s or more): spread them (RPS, irqbalance, smp_affinity) "
		"before blaming the cipher.\n",
		BENCH_HOTSPOT_SHARE, BENCH_HOTSPOT_MIN_RATE);
}

void bench_print_table(const struct bench_results *r, const struct bench_summary *s, FILE *f)
{
	print_header(r, f);
	print_main(r, s, f);
	print_cpu(r, s, f);
	fprintf(f, "\nsecure / plain (throughput under 1 is slower; CPU over 1 costs more):\n");
	fprintf(f, "%7s  %10s  %10s  %10s  %10s\n", "streams", "throughput", "host CPU", "CPU/GB",
		"ctxsw/s");
	for (size_t si = 0; si < r->n_streams; si++) {
		struct bench_ratio q;

		bench_ratio_of(&s[bench_cell_index(si, BENCH_PLAIN)],
			       &s[bench_cell_index(si, BENCH_SECURE)], &q);
		fprintf(f, "%7u  %9.2fx  %9.2fx  %9.2fx  %9.2fx\n", q.streams, q.gbps, q.host_cpu,
			q.cpu_per_gb, q.ctxt);
	}

	if (r->reference) {
		struct bench_summary *ref = bench_summarize(r->reference);

		if (ref)
			bench_print_reference(r, s, ref, f);
		bench_summaries_free(ref, r->reference->n_cells);
	}
	fputc('\n', f);
	if (!r->hist.available) {
		fprintf(f, "encryption latency histogram: not measured: %s\n", r->hist.reason);
	} else {
		uint64_t max = 1, total = 0;

		for (size_t i = 0; i < r->hist.n_buckets; i++) {
			total += r->hist.buckets[i].count;
			if (r->hist.buckets[i].count > max)
				max = r->hist.buckets[i].count;
		}
		fprintf(f, "encryption latency histogram (%s, one extra secure run, %llu calls):\n",
			r->hist.function, (unsigned long long)total);
		for (size_t i = 0; i < r->hist.n_buckets; i++) {
			const struct bench_hist_bucket *h = &r->hist.buckets[i];
			int bar = (int)(40 * h->count / max);

			fprintf(f, "  [%8.0f, %8.0f) ns %10llu |%.*s\n", h->low, h->high,
				(unsigned long long)h->count, bar,
				"########################################");
		}
	}
}

/* --- JSON ------------------------------------------------------------------ */

static json_t *stat_json(const struct bench_stat *st)
{
	if (!st->n)
		return json_null();
	return json_pack("{s:f, s:f, s:f, s:i}", "median", st->median, "min", st->min, "max",
			 st->max, "n", (int)st->n);
}

static json_t *num_or_null(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

static json_t *per_cpu_json(const struct bench_summary *x)
{
	json_t *arr = json_array();

	for (unsigned int k = 0; arr && k < x->n_cpu; k++) {
		const struct bench_cpu *c = &x->cpu[k];

		json_array_append_new(
		    arr, json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "cpu", (int)k,
				   "usr", c->usr, "sys", c->sys, "softirq", c->softirq, "irq",
				   c->irq, "busy", c->busy, "net_rx_per_s", c->net_rx,
				   "net_tx_per_s", c->net_tx, "interrupts_per_s", c->irqs));
	}
	return arr;
}

static json_t *samples_json(const struct bench_cell *c)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < c->n_runs; i++) {
		const struct bench_run *run = &c->runs[i];

		json_array_append_new(
		    arr,
		    json_pack("{s:f, s:f, s:f, s:o, s:f, s:o, s:f, s:f}", "throughput_gbps",
			      run->gbps, "bytes", run->bytes, "seconds", run->seconds,
			      "cpu_s_per_gb", num_or_null(cpu_per_gb(run)), "host_cpu_pct",
			      run->host_cpu_pct, "wireguard_cpu_pct", num_or_null(run->wg_cpu_pct),
			      "ctxt_per_s", run->ctxt_per_s, "retransmits", run->retransmits));
	}
	return arr;
}

json_t *bench_result_json(const struct bench_cell *c, const struct bench_summary *x)
{
	json_t *o = json_pack(
	    "{s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "path",
	    bench_path_name(x->path), "streams", (int)x->streams, "runs", (int)c->n_runs,
	    "throughput_gbps", stat_json(&x->gbps), "percent_of_raw", num_or_null(x->pct_of_raw),
	    "host_cpu_pct", stat_json(&x->host_cpu), "usr_pct", stat_json(&x->usr), "sys_pct",
	    stat_json(&x->sys), "softirq_pct", stat_json(&x->softirq), "irq_pct",
	    stat_json(&x->irq), "cpu_s_per_gb", stat_json(&x->cpu_per_gb), "ctxt_per_s",
	    stat_json(&x->ctxt), "wireguard_cpu_pct", stat_json(&x->wg_cpu), "retransmits",
	    stat_json(&x->retransmits));

	if (!o)
		return NULL;
	json_object_set_new(o, "per_cpu", per_cpu_json(x));
	json_object_set_new(o, "hotspot",
			    json_pack("{s:b, s:o, s:f, s:s}", "flag", x->hotspot, "cpu",
				      x->hot_cpu >= 0 ? json_integer(x->hot_cpu) : json_null(),
				      "share_pct", x->hot_share, "source", x->hot_what));
	json_object_set_new(o, "samples", samples_json(c));
	return o;
}

static json_t *hist_json(const struct bench_hist *h)
{
	json_t *buckets = json_array();

	for (size_t i = 0; buckets && i < h->n_buckets; i++)
		json_array_append_new(buckets,
				      json_pack("{s:f, s:o, s:I}", "low_ns", h->buckets[i].low,
						"high_ns", num_or_null(h->buckets[i].high), "count",
						(json_int_t)h->buckets[i].count));
	return json_pack("{s:b, s:o, s:o, s:o}", "available", h->available, "reason",
			 h->available ? json_null() : json_string(h->reason), "function",
			 h->available ? json_string(h->function) : json_null(), "buckets", buckets);
}

static json_t *report_json(const struct bench_results *r, const struct bench_summary *s)
{
	json_t *root, *streams = json_array(), *paths = json_array(), *results = json_array(),
		      *ratios = json_array();

	for (size_t i = 0; streams && i < r->n_streams; i++)
		json_array_append_new(streams, json_integer(r->streams[i]));
	for (int p = 0; paths && p < BENCH_N_PATHS; p++)
		json_array_append_new(paths, json_pack("{s:s, s:s}", "name", path_names[p],
						       "description", path_descriptions[p]));
	for (size_t i = 0; results && i < r->n_cells; i++)
		json_array_append_new(results, bench_result_json(&r->cells[i], &s[i]));
	for (size_t si = 0; ratios && si < r->n_streams; si++) {
		struct bench_ratio q;

		bench_ratio_of(&s[bench_cell_index(si, BENCH_PLAIN)],
			       &s[bench_cell_index(si, BENCH_SECURE)], &q);
		json_array_append_new(ratios, json_pack("{s:i, s:f, s:f, s:f, s:f}", "streams",
							(int)q.streams, "throughput", q.gbps,
							"host_cpu", q.host_cpu, "cpu_s_per_gb",
							q.cpu_per_gb, "ctxt_per_s", q.ctxt));
	}
	root = json_pack(
	    "{s:i, s:s, s:{s:i, s:s, s:o}, s:{s:i, s:o, s:i, s:b}, s:{s:s, s:s}, s:{s:i, s:i, "
	    "s:i}, "
	    "s:{s:i, s:i}, s:f, s:o, s:o, s:o, s:o}",
	    "version", 1, "tool", "fabricd bench", "host", "cpus", (int)r->n_cpu, "kernel",
	    r->kernel, "busy_before_pct", num_or_null(r->busy_before), "settings", "duration_s",
	    (int)r->duration, "streams", streams, "repeat", (int)r->repeat, "quick", r->quick,
	    "wireguard", "backend", r->backend, "implementation", r->implementation, "mtu",
	    "underlay", (int)r->underlay_mtu, "fabric", (int)r->fabric_mtu, "guest",
	    (int)r->zone_mtu, "vni", "plain", (int)r->plain_vni, "secure", (int)r->secure_vni,
	    "wall_seconds", r->wall_seconds, "paths", paths, "results", results, "secure_vs_plain",
	    ratios, "encryption_histogram", hist_json(&r->hist));
	if (root && r->reference) {
		struct bench_summary *ref = bench_summarize(r->reference);
		json_t *o = ref ? bench_reference_json(r, s, ref) : NULL;

		bench_summaries_free(ref, r->reference->n_cells);
		if (!o || json_object_set_new(root, "reference", o) < 0) {
			json_decref(root);
			return NULL;
		}
	}
	return root;
}

int bench_write_json(const struct bench_results *r, const struct bench_summary *s, const char *path)
{
	json_t *root = report_json(r, s);
	int ret = 0;

	if (!root)
		return -ENOMEM;
	if (json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0)
		ret = errno ? -errno : -EIO;
	json_decref(root);
	return ret;
}
