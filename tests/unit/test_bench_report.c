// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_bench_report.c - the bench's arithmetic and reports on fixed data:
 * medians and spread, the /proc parsers and deltas, iperf3 and bpftrace
 * and perf output, summaries (percent of raw, CPU per GB, secure/plain ratios,
 * hotspots), the text table, the JSON keys and a well-formed SVG.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/iperf.h"
#include "bench/profile.h"
#include "bench/sample.h"
#include "bench/trace.h"
#include "unit.h"

#define NEAR(a, b) ((a) - (b) < 1e-6 && (b) - (a) < 1e-6)

static void test_stat(void)
{
	const double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, skip[] = {-1, 5, -1, 7};
	struct bench_stat st;

	bench_stat_of(odd, 3, &st);
	CHECK(NEAR(st.median, 2) && NEAR(st.min, 1) && NEAR(st.max, 3) && st.n == 3, "odd %g",
	      st.median);
	bench_stat_of(even, 4, &st);
	CHECK(NEAR(st.median, 2.5) && NEAR(st.min, 1) && NEAR(st.max, 4), "even %g", st.median);
	bench_stat_of(skip, 4, &st);
	CHECK(st.n == 2 && NEAR(st.median, 6), "negatives are 'not measured' %g", st.median);
	bench_stat_of(skip, 1, &st);
	CHECK_INT(st.n, 0, "nothing measured");
}

#define CLOSE(a, b) ((a) - (b) < 5e-4 && (b) - (a) < 5e-4)

/* --reference's interval of paired ratios (values checked against Python's statistics). */
static void test_ci(void)
{
	const double same[] = {0.99, 1.01, 1.00, 1.005}, slower[] = {0.90, 0.92, -1, 0.91, 0.89};
	const double wide[] = {1.0, 1.06, 0.95, 1.02, 0.97}, one[] = {0.5, -1};
	const double faster[] = {1.30, 1.32, 1.35, 1.31};
	struct bench_ci ci;

	CHECK(NEAR(bench_t95(1), 12.706) && NEAR(bench_t95(30), 2.042), "t table");
	CHECK(CLOSE(bench_t95(60), 2.000) && CLOSE(bench_t95(120), 1.980), "t past the table");
	CHECK(isinf(bench_t95(0)), "no degrees of freedom");

	bench_ci_of(same, 4, &ci);
	CHECK(ci.n == 4 && CLOSE(ci.mean, 1.00122) && CLOSE(ci.low, 0.98771) &&
		  CLOSE(ci.high, 1.01492),
	      "same: %g %g-%g", ci.mean, ci.low, ci.high);
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_LOWER), BENCH_WITHIN, "same: within 3%%");
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_HIGHER), BENCH_WITHIN,
		  "same, as a cost above: within 3%%");
	CHECK_INT(bench_ci_verdict(&ci, 0.01, BENCH_WORSE_LOWER), BENCH_UNDECIDED,
		  "same: not shown within 1%% (low 0.988)");
	CHECK_INT(bench_ci_verdict(&ci, 0.01, BENCH_WORSE_HIGHER), BENCH_UNDECIDED,
		  "same: not shown within 1%% (high 1.015)");
	CHECK_INT(bench_ci_verdict(&ci, 0.013, BENCH_WORSE_LOWER), BENCH_WITHIN,
		  "same: no lower than 0.987");
	CHECK_INT(bench_ci_pairs_needed(&ci, 0.03, BENCH_WORSE_LOWER), 0,
		  "decided: nothing needed");

	bench_ci_of(slower, 5, &ci);
	CHECK(ci.n == 4 && CLOSE(ci.mean, 0.90493) && CLOSE(ci.low, 0.88462) &&
		  CLOSE(ci.high, 0.92571),
	      "slower, a run unmeasured: %g %g-%g", ci.mean, ci.low, ci.high);
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_LOWER), BENCH_OUTSIDE,
		  "slower by 10%%: outside");
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_HIGHER), BENCH_WITHIN,
		  "10%% less CPU per GB: no cost");

	bench_ci_of(faster, 4, &ci);
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_LOWER), BENCH_WITHIN,
		  "30%% faster: no cost");
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_HIGHER), BENCH_OUTSIDE,
		  "30%% more CPU per GB: outside");
	CHECK_INT(bench_ci_pairs_needed(&ci, 0.03, BENCH_WORSE_HIGHER), 0,
		  "decided: nothing needed");

	bench_ci_of(wide, 5, &ci);
	CHECK(CLOSE(ci.mean, 0.99926) && CLOSE(ci.low, 0.94750) && CLOSE(ci.high, 1.05386),
	      "wide: %g %g-%g", ci.mean, ci.low, ci.high);
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_LOWER), BENCH_UNDECIDED,
		  "wide: undecided");
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_HIGHER), BENCH_UNDECIDED,
		  "wide, as a cost above: undecided");
	CHECK_INT(bench_ci_pairs_needed(&ci, 0.03, BENCH_WORSE_LOWER), 9,
		  "wide: about 9 pairs decide it");
	/* the mean 0.999 is a little farther from 1.03 than from 0.97 */
	CHECK_INT(bench_ci_pairs_needed(&ci, 0.03, BENCH_WORSE_HIGHER), 9,
		  "wide, above: about 9 pairs too");
	ci.log_sd *= 4; /* 16 times the pairs */
	CHECK_INT(bench_ci_pairs_needed(&ci, 0.03, BENCH_WORSE_LOWER), 133,
		  "four times the spread");

	bench_ci_of(one, 2, &ci);
	CHECK(ci.n == 1 && NEAR(ci.mean, 0.5) && NEAR(ci.low, 0.5) && NEAR(ci.high, 0.5),
	      "one pair: no interval");
	CHECK_INT(bench_ci_verdict(&ci, 0.03, BENCH_WORSE_LOWER), BENCH_UNDECIDED,
		  "one pair: undecided");
	CHECK_INT(bench_ci_pairs_needed(&ci, 0.03, BENCH_WORSE_LOWER), 0,
		  "one pair: nothing to go by");
	bench_ci_of(one + 1, 1, &ci);
	CHECK_INT(ci.n, 0, "nothing measured");
}

static const char stat_a[] = "cpu  100 0 100 800 0 0 0 0 0 0\n"
			     "cpu0 50 0 50 400 0 0 0 0 0 0\n"
			     "cpu1 50 0 50 400 0 0 0 0 0 0\n"
			     "intr 12345 1 2 3\n"
			     "ctxt 1000\n"
			     "btime 1\n";
/* cpu0: +150 ticks, all busy; cpu1: +250 ticks, 100 idle */
static const char stat_b[] = "cpu  200 0 250 900 0 0 50 0 0 0\n"
			     "cpu0 50 0 150 400 0 0 50 0 0 0\n"
			     "cpu1 150 0 100 500 0 0 0 0 0 0\n"
			     "ctxt 3000\n";
static const char softirqs_a[] = "                    CPU0       CPU1\n"
				 "          HI:          0          0\n"
				 "      NET_TX:          5          5\n"
				 "      NET_RX:        100        100\n";
static const char softirqs_b[] = "                    CPU0       CPU1\n"
				 "      NET_TX:          7          5\n"
				 "      NET_RX:      10100        100\n";
/* CPU1 is offline: the columns are CPU0 and CPU2 */
static const char interrupts[] = "           CPU0       CPU2\n"
				 " 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
				 " 30:        100         50  PCI-MSI  eth0-rx-0\n"
				 "LOC:      99999      99999   Local timer interrupts\n"
				 "ERR:          0\n";

static void test_parsers(void)
{
	struct bench_snap s;
	uint64_t ticks = 0;

	CHECK_INT(bench_snap_init(&s, 4), 0, "init");
	CHECK_INT(bench_parse_stat(stat_a, &s), 0, "stat");
	CHECK_INT(s.total[CPUF_IDLE], 800, "idle total");
	CHECK_INT(s.cpu[1][CPUF_SYSTEM], 50, "cpu1 system");
	CHECK_INT(s.ctxt, 1000, "ctxt");
	CHECK_INT(bench_parse_stat("intr 1\n", &s), -EINVAL, "no cpu line");
	CHECK_INT(bench_parse_softirqs(softirqs_a, &s), 0, "softirqs");
	CHECK_INT(s.net_rx[0], 100, "NET_RX cpu0");
	CHECK_INT(s.net_tx[1], 5, "NET_TX cpu1");
	CHECK_INT(bench_parse_interrupts(interrupts, &s), 0, "interrupts");
	CHECK_INT(s.irqs[0], 101, "device interrupts cpu0 (LOC is not one)");
	CHECK_INT(s.irqs[1], 0, "offline cpu1 has no column");
	CHECK_INT(s.irqs[2], 50, "the second column is cpu2");
	bench_snap_free(&s);

	CHECK_INT(bench_parse_pid_stat("42 (wireguard-go) S 1 42 42 0 -1 4194560 100 0 0 0 "
				       "250 125 0 0 20 0 9 0 100 0 0\n",
				       &ticks),
		  0, "pid stat");
	CHECK_INT(ticks, 375, "utime + stime");
	CHECK_INT(bench_parse_pid_stat("7 (a) b) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0\n", &ticks), 0,
		  "comm with ') '");
	CHECK_INT(ticks, 7, "fields after the last ')'");
	CHECK_INT(bench_parse_pid_stat("garbage", &ticks), -EINVAL, "garbage");
}

static void test_delta(void)
{
	struct bench_snap a, b;
	struct bench_run run = {0};
	long hz = sysconf(_SC_CLK_TCK);

	bench_snap_init(&a, 2);
	bench_snap_init(&b, 2);
	bench_parse_stat(stat_a, &a);
	bench_parse_softirqs(softirqs_a, &a);
	bench_parse_stat(stat_b, &b);
	bench_parse_softirqs(softirqs_b, &b);
	a.t = 10;
	b.t = 12;
	a.proc_ok = b.proc_ok = true;
	a.proc_ticks = 0;
	b.proc_ticks = (uint64_t)hz; /* one CPU second in two seconds: 50 % */
	CHECK_INT(bench_snap_delta(&a, &b, true, &run), 0, "delta");
	/* total: +100 user, +150 system, +100 idle, +50 softirq = 400 ticks, 300 busy */
	CHECK(NEAR(run.host_cpu_pct, 75), "host %g", run.host_cpu_pct);
	CHECK(NEAR(run.usr_pct, 25) && NEAR(run.sys_pct, 37.5) && NEAR(run.softirq_pct, 12.5),
	      "split %g %g %g", run.usr_pct, run.sys_pct, run.softirq_pct);
	CHECK(NEAR(run.cpu_seconds, 300.0 / (double)hz), "cpu seconds %g", run.cpu_seconds);
	CHECK(NEAR(run.ctxt_per_s, 1000), "ctxt %g", run.ctxt_per_s);
	CHECK(NEAR(run.cpu[0].busy, 100) && NEAR(run.cpu[1].busy, 60), "per cpu %g %g",
	      run.cpu[0].busy, run.cpu[1].busy);
	CHECK(NEAR(run.cpu[0].net_rx, 5000) && NEAR(run.cpu[1].net_rx, 0), "net_rx %g",
	      run.cpu[0].net_rx);
	CHECK(NEAR(run.wg_cpu_pct, 50), "wg %g", run.wg_cpu_pct);
	free(run.cpu);
	run.cpu = NULL;
	b.proc_ok = false;
	bench_snap_delta(&a, &b, true, &run);
	CHECK(run.wg_cpu_pct < 0, "a process gone: not measured");
	free(run.cpu);
	bench_snap_free(&a);
	bench_snap_free(&b);
}

static void test_iperf(void)
{
	struct bench_run run = {0};
	char err[256];

	CHECK_INT(bench_iperf_parse("{\"start\":{},\"end\":{\"sum_sent\":{\"bytes\":2000000000,"
				    "\"retransmits\":12},\"sum_received\":{\"bytes\":1250000000,"
				    "\"bits_per_second\":2.5e9}}}",
				    &run, err, sizeof(err)),
		  0, "result");
	CHECK(NEAR(run.gbps, 2.5) && NEAR(run.bytes, 1.25e9) && NEAR(run.retransmits, 12),
	      "values %g %g %g", run.gbps, run.bytes, run.retransmits);
	CHECK_INT(bench_iperf_parse("{\"start\":{},\"intervals\":[],\"end\":{},\"error\":\"unable "
				    "to connect to server: Connection refused\"}",
				    &run, err, sizeof(err)),
		  -EINVAL, "error");
	CHECK(strstr(err, "Connection refused") != NULL, "iperf3's error kept: %s", err);
	CHECK_INT(bench_iperf_parse("not json", &run, err, sizeof(err)), -EINVAL, "not json");
}

static void test_trace(void)
{
	static const char out[] = "Attaching 3 probes...\n"
				  "^C\n"
				  "@ns:\n"
				  "[512, 1K)             12 |@@                     |\n"
				  "[1K, 2K)             300 |@@@@@@@@@@@@@@@@@@@@@@@|\n"
				  "[2K, 4K)              40 |@@@                    |\n"
				  "[4M, ...)              1 |                       |\n";
	struct bench_hist h = {0};

	CHECK_INT(bench_trace_parse(out, &h), 0, "hist");
	CHECK_INT(h.n_buckets, 4, "buckets");
	if (h.n_buckets == 4) {
		CHECK(NEAR(h.buckets[0].low, 512) && NEAR(h.buckets[0].high, 1024), "first");
		CHECK_INT(h.buckets[1].count, 300, "second count");
		CHECK(NEAR(h.buckets[2].high, 4096), "K suffix");
		CHECK(h.buckets[3].high < 0 && NEAR(h.buckets[3].low, 4194304), "open-ended");
	}
	CHECK_INT(bench_trace_parse("Attaching 3 probes...\n", &h), -EINVAL, "no histogram");
	free(h.buckets);
}

/* One run with fixed figures on 2 CPUs; cpu0 takes net_rx0 of the NET_RX softirqs. */
static void add_run(struct bench_results *r, size_t si, enum bench_path p, double gbps,
		    double cpu_s, double host, double net_rx0)
{
	struct bench_run run = {
	    .gbps = gbps,
	    .bytes = gbps * 1e9 / 8 * 10,
	    .seconds = 10,
	    .host_cpu_pct = host,
	    .usr_pct = host / 4,
	    .sys_pct = host / 2,
	    .softirq_pct = host / 4,
	    .cpu_seconds = cpu_s,
	    .ctxt_per_s = 1000 * gbps,
	    .wg_cpu_pct = p == BENCH_SECURE ? 90 : 0,
	    .retransmits = 3,
	    .n_cpu = 2,
	};

	run.cpu = calloc(2, sizeof(*run.cpu));
	run.cpu[0] = (struct bench_cpu){.busy = host, .net_rx = net_rx0};
	run.cpu[1] = (struct bench_cpu){.busy = host / 2, .net_rx = 10000 - net_rx0};
	CHECK_INT(bench_cell_add(&r->cells[bench_cell_index(si, p)], r->repeat, &run), 0, "add");
	free(run.cpu);
}

/* A minimal XML check: tags nest and close, attributes are quoted, no stray '&'. */
static int well_formed(const char *s)
{
	char stack[64][16];
	int depth = 0, elements = 0;

	for (const char *p = s; *p; p++) {
		if (*p == '&') {
			if (strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) &&
			    strncmp(p, "&gt;", 4) && strncmp(p, "&quot;", 6))
				return -1;
		}
		if (*p != '<')
			continue;
		if (p[1] == '?') {
			p = strstr(p, "?>");
			if (!p)
				return -1;
			continue;
		}
		if (p[1] == '/') {
			size_t n = strcspn(p + 2, ">");

			if (!depth || strlen(stack[depth - 1]) != n ||
			    strncmp(stack[depth - 1], p + 2, n))
				return -1;
			depth--;
			p += n + 2;
			continue;
		}
		{
			const char *end = p + 1;
			bool quoted = false;
			size_t n = strcspn(p + 1, " />");

			while (*end && (quoted || *end != '>')) {
				if (*end == '"')
					quoted = !quoted;
				end++;
			}
			if (!*end || n == 0 || n >= 16 || depth == 64)
				return -1;
			elements++;
			if (end[-1] != '/') {
				memcpy(stack[depth], p + 1, n);
				stack[depth++][n] = '\0';
			}
			p = end;
		}
	}
	return depth == 0 ? elements : -1;
}

static void test_report(void)
{
	struct bench_results r = {
	    .duration = 10,
	    .repeat = 3,
	    .streams = {1, 4},
	    .n_streams = 2,
	    .n_cpu = 2,
	    .kernel = "6.1.0-test",
	    .backend = "userspace",
	    .implementation = "wireguard-go v0.0.20220316",
	    .underlay_mtu = 1500,
	    .fabric_mtu = 1440,
	    .zone_mtu = 1390,
	    .plain_vni = 100,
	    .secure_vni = 200,
	    .wall_seconds = 190,
	    .busy_before = 42,
	};
	struct bench_summary *s;
	struct bench_ratio q;
	char path[] = "/tmp/test_bench_report.XXXXXX", *text = NULL;
	size_t len = 0;
	json_error_t jerr;
	json_t *root, *res;
	FILE *f;
	int fd;

	r.hist.available = false;
	snprintf(r.hist.reason, sizeof(r.hist.reason), "bpftrace is not installed");
	CHECK_INT(bench_results_init(&r), 0, "init");
	for (size_t si = 0; si < 2; si++) {
		/* raw 10/12/11, plain 8/9/10, secure 2/2.2/1.8 Gbit/s */
		add_run(&r, si, BENCH_RAW, 10, 2, 50, 5000);
		add_run(&r, si, BENCH_RAW, 12, 2, 50, 5000);
		add_run(&r, si, BENCH_RAW, 11, 2, 50, 5000);
		add_run(&r, si, BENCH_PLAIN, 8, 2, 60, 5000);
		add_run(&r, si, BENCH_PLAIN, 10, 2, 60, 5000);
		add_run(&r, si, BENCH_PLAIN, 9, 2, 60, 5000);
		add_run(&r, si, BENCH_SECURE, 2, 4, 90, 9500);
		add_run(&r, si, BENCH_SECURE, 2.2, 4, 90, 9500);
		add_run(&r, si, BENCH_SECURE, 1.8, 4, 90, 9500);
	}
	{
		struct bench_run extra = {0};

		CHECK_INT(bench_cell_add(&r.cells[0], r.repeat, &extra), -ENOSPC, "cell full");
	}
	s = bench_summarize(&r);
	CHECK(s != NULL, "summaries");
	if (!s)
		goto out;
	CHECK(NEAR(s[0].gbps.median, 11) && NEAR(s[0].gbps.min, 10) && NEAR(s[0].gbps.max, 12),
	      "raw median %g", s[0].gbps.median);
	CHECK(NEAR(s[0].pct_of_raw, 100), "raw is 100 %% of raw");
	CHECK(NEAR(s[1].pct_of_raw, 100.0 * 9 / 11), "plain %% raw %g", s[1].pct_of_raw);
	/* plain 9 Gbit/s for 10 s = 11.25 GB with 2 CPU s: 0.1778 s/GB */
	CHECK(NEAR(s[1].cpu_per_gb.median, 2 / 11.25), "plain CPU/GB %g", s[1].cpu_per_gb.median);
	CHECK(NEAR(s[2].cpu_per_gb.median, 4 / 2.5), "secure CPU/GB %g", s[2].cpu_per_gb.median);
	CHECK(NEAR(s[2].wg_cpu.median, 90), "wg cpu");
	CHECK(!s[1].hotspot && s[1].hot_cpu == 0 && NEAR(s[1].hot_share, 50), "no hotspot");
	CHECK(s[2].hotspot && s[2].hot_cpu == 0 && NEAR(s[2].hot_share, 95), "hotspot %d %g",
	      s[2].hot_cpu, s[2].hot_share);
	CHECK(s[2].n_cpu == 2 && NEAR(s[2].cpu[1].busy, 45), "per-cpu medians");
	bench_ratio_of(&s[1], &s[2], &q);
	CHECK(NEAR(q.gbps, 2.0 / 9) && NEAR(q.host_cpu, 1.5) &&
		  NEAR(q.cpu_per_gb, 1.6 / (2 / 11.25)),
	      "ratios %g %g %g", q.gbps, q.host_cpu, q.cpu_per_gb);

	/* the table */
	f = open_memstream(&text, &len);
	bench_print_table(&r, s, f);
	fclose(f);
	CHECK(strstr(text, "11.00 ±1.00") != NULL, "median ± half range in:\n%s", text);
	CHECK(strstr(text, "secure / plain") && strstr(text, "0.22x"), "ratios in the table");
	CHECK(strstr(text, "YES: cpu0 takes 95% of the NET_RX softirqs") != NULL, "hotspot line");
	CHECK(strstr(text, "encryption latency histogram: not measured: bpftrace is not "
			   "installed") != NULL,
	      "one line on the missing histogram");
	CHECK(strstr(text, "wireguard-go v0.0.20220316") != NULL, "backend named");
	CHECK(strstr(text, "Host before the bench: 42.0% busy: WARNING") != NULL,
	      "a busy host is called out");
	free(text);
	text = NULL;

	/* the JSON */
	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	if (fd >= 0)
		close(fd);
	CHECK_INT(bench_write_json(&r, s, path), 0, "json");
	root = json_load_file(path, 0, &jerr);
	CHECK(root != NULL, "json parses: %s", jerr.text);
	res = json_array_get(json_object_get(root, "results"), 2);
	CHECK_STR(json_string_value(json_object_get(res, "path")), "secure", "third result");
	CHECK(NEAR(json_real_value(
		       json_object_get(json_object_get(res, "throughput_gbps"), "median")),
		   2),
	      "secure median in json");
	CHECK(json_is_true(json_object_get(json_object_get(res, "hotspot"), "flag")), "hotspot");
	CHECK_INT(json_array_size(json_object_get(res, "samples")), 3, "samples");
	CHECK_INT(json_array_size(json_object_get(res, "per_cpu")), 2, "per cpu");
	CHECK_INT(json_array_size(json_object_get(root, "secure_vs_plain")), 2, "ratios");
	CHECK(json_is_false(
		  json_object_get(json_object_get(root, "encryption_histogram"), "available")),
	      "no histogram");
	CHECK(NEAR(json_number_value(
		       json_object_get(json_object_get(root, "host"), "busy_before_pct")),
		   42),
	      "busy before in json");
	CHECK_STR(json_string_value(json_object_get(json_object_get(root, "wireguard"), "backend")),
		  "userspace", "backend");
	json_decref(root);
	unlink(path);

	/* the SVG */
	f = open_memstream(&text, &len);
	CHECK_INT(bench_write_svg(&r, s, f), 0, "svg");
	fclose(f);
	CHECK(!strncmp(text, "<?xml", 5) && strstr(text, "</svg>"), "svg document");
	/* 12 bars + background + 3 legend swatches */
	CHECK(well_formed(text) > 16, "svg well-formed (%d elements)", well_formed(text));
	CHECK(strstr(text, "VXLAN in WireGuard") != NULL, "legend");
	free(text);
	bench_summaries_free(s, r.n_cells);
out:
	bench_results_free(&r);
}

/* --reference: the text section and the JSON object, paired and median ratios. */
static void test_reference(void)
{
	struct bench_results r = {.repeat = 3, .streams = {1}, .n_streams = 1, .n_cpu = 2};
	struct bench_results *x = calloc(1, sizeof(*x));
	struct bench_summary *s = NULL, *rs = NULL;
	char *text = NULL;
	size_t len = 0;
	json_t *o, *q;
	FILE *f;

	CHECK_INT(bench_results_init(&r), 0, "init");
	if (!x)
		goto out;
	*x = (struct bench_results){.repeat = 3, .streams = {1}, .n_streams = 1, .n_cpu = 2};
	snprintf(x->implementation, sizeof(x->implementation), "wireguard-go v0.0.20220316");
	r.reference = x;
	CHECK_INT(bench_results_init(x), 0, "init reference");
	for (int p = 0; p < BENCH_N_PATHS; p++) {
		/* fabricd 9, 10, 6 against 10, 10, 12: run by run 0.9, 1.0, 0.5 */
		add_run(&r, 0, p, 9, 2, 50, 5000);
		add_run(&r, 0, p, 10, 2, 50, 5000);
		add_run(&r, 0, p, 6, 2, 50, 5000);
		add_run(x, 0, p, 10, 2, 50, 5000);
		add_run(x, 0, p, 10, 2, 50, 5000);
		add_run(x, 0, p, 12, 2, 50, 5000);
	}
	s = bench_summarize(&r);
	rs = bench_summarize(x);
	CHECK(s && rs, "summaries");
	if (!s || !rs)
		goto out;
	f = open_memstream(&text, &len);
	bench_print_reference(&r, s, rs, f);
	fclose(f);
	CHECK(strstr(text, "fabricd against the same lab built by hand") != NULL, "%s", text);
	/* medians 9 and 10; run by run 0.9, 1.0, 0.5: geometric mean 0.766, t(2) = 4.303 */
	CHECK(strstr(text, "secure        1      9.00     10.00 0.766x 0.303-1.938") != NULL,
	      "secure row in:\n%s", text);
	CHECK(strstr(text, "? (about --repeat 11)") != NULL, "verdict in:\n%s", text);
	free(text);
	o = bench_reference_json(&r, s, rs);
	q = json_array_get(json_object_get(o, "fabricd_vs_reference"), 2);
	CHECK_STR(json_string_value(json_object_get(q, "path")), "secure", "third ratio");
	CHECK(NEAR(json_real_value(json_object_get(q, "throughput")), 0.9), "ratio of medians");
	CHECK(NEAR(json_real_value(json_object_get(json_object_get(q, "throughput_paired"), "min")),
		   0.5),
	      "paired min");
	/* CPU s/GB: 2 CPU s for each run, so the inverse of the throughput ratio */
	CHECK(NEAR(json_real_value(
		       json_object_get(json_object_get(q, "cpu_s_per_gb_paired"), "median")),
		   10.0 / 9),
	      "paired CPU");
	CHECK(CLOSE(json_real_value(json_object_get(json_object_get(q, "throughput_ci95"), "low")),
		    0.30298),
	      "interval in the JSON");
	CHECK_STR(json_string_value(json_object_get(q, "verdict")), "undecided", "verdict");
	CHECK_INT(json_integer_value(json_object_get(q, "repeats_needed")), 11, "repeats needed");
	CHECK(NEAR(json_real_value(json_object_get(o, "tolerance")), 0.03), "tolerance");
	CHECK_INT(json_array_size(json_object_get(o, "results")), 3, "reference cells");
	CHECK_STR(json_string_value(json_object_get(o, "implementation")),
		  "wireguard-go v0.0.20220316", "implementation");
	json_decref(o);
out:
	bench_summaries_free(s, r.n_cells);
	bench_summaries_free(rs, x ? x->n_cells : 0);
	if (!r.reference)
		free(x);
	bench_results_free(&r); /* frees the reference too */
}

/* perf report's text, as `perf report --stdio --no-children --sort sym -F sample,sym` prints it */
static const char perf_text[] = "# To display the perf.data header info, please use --header\n"
				"#\n"
				"# Samples: 31K of event 'cpu-clock:ppp'\n"
				"#      Samples  Symbol\n"
				"# ............  ..............\n"
				"#\n"
				"         9000  [k] pvm_safe_halt_hc\n"
				"          640  [k] nft_do_chain\n"
				"          180  [k] nf_hook_slow\n"
				"           60  [k] nft_do_chain_inet\n"
				"           20  [k] nft_rhash_lookup\n"
				"          160  [k] br_nf_pre_routing\n"
				"           73  [.] Nread\n"
				"           27  [.] 0x000000000000408e\n"
				"\n";

static void test_profile_parse(void)
{
	struct bench_profile_run run = {0};

	CHECK(bench_profile_netfilter_symbol("nft_do_chain") &&
		  bench_profile_netfilter_symbol("nf_hook_slow") &&
		  bench_profile_netfilter_symbol("nf_tables_trans_destroy_work"),
	      "netfilter's functions");
	CHECK(!bench_profile_netfilter_symbol("br_nf_pre_routing") &&
		  !bench_profile_netfilter_symbol("nf_hook_slow_list") &&
		  !bench_profile_netfilter_symbol("tcp_sendmsg"),
	      "bridge netfilter's and everything else: not counted");
	CHECK_INT(bench_profile_parse(perf_text, &run), 0, "parse");
	CHECK_INT(run.samples, 10160, "every sample");
	CHECK_INT(run.netfilter_samples, 900, "netfilter's: nft_* and nf_hook_slow");
	/* counts add up over calls: one run's report may come in parts */
	CHECK_INT(bench_profile_parse("  100  [k] nft_do_chain\n", &run), 0, "second part");
	CHECK_INT(run.netfilter_samples, 1000, "added");
	/* 1000 samples of 250 us: 0.25 s of 10 busy CPU seconds */
	run.cpu_seconds = 10;
	CHECK(NEAR(bench_profile_share(&run), 2.5), "share %g", bench_profile_share(&run));
	run.cpu_seconds = 0;
	CHECK(bench_profile_share(&run) < 0, "no busy time: no share");
	CHECK_INT(bench_profile_parse("# only a header\n#\n", &run), -EINVAL, "no sample line");
	CHECK_INT(bench_profile_parse("", &run), -EINVAL, "empty");
	CHECK_INT(bench_profile_parse(NULL, &run), -EINVAL, "no text");
	CHECK_INT(bench_profile_parse("  12 nft_do_chain\n 7x [k] nft_do_chain\n", &run), -EINVAL,
		  "malformed lines are not samples");
	CHECK_INT(run.netfilter_samples, 1000, "a failed parse adds nothing");
}

static void test_profile_unavailable(void)
{
	char why[128], *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	struct bench_profile pr = {0};
	char *text = NULL;
	size_t len = 0;
	json_t *o;
	FILE *f;

	setenv("PATH", "/nonexistent", 1);
	CHECK(!bench_profile_possible(why, sizeof(why)), "no perf on PATH");
	CHECK_STR(why, "perf is not installed (Debian package linux-perf)", "reason");
	if (path) {
		setenv("PATH", path, 1);
		free(path);
	}
	snprintf(pr.reason, sizeof(pr.reason), "%s", why);
	f = open_memstream(&text, &len);
	bench_print_profile(&pr, f);
	fclose(f);
	CHECK(strstr(text, "netfilter profile: not measured: perf is not installed") != NULL, "%s",
	      text);
	free(text);
	o = bench_profile_json(&pr);
	CHECK(json_is_false(json_object_get(o, "available")), "not available");
	CHECK_STR(json_string_value(json_object_get(o, "reason")), why, "reason in the JSON");
	CHECK_INT(json_array_size(json_object_get(o, "paths")), 0, "no paths");
	json_decref(o);
}

static void set_pair(struct bench_profile *pr, int p, size_t i, uint64_t fab, uint64_t ref)
{
	/* 4000 samples a CPU second: n samples of 10 busy CPU seconds is n / 400 percent */
	pr->fabricd[p][i] = (struct bench_profile_run){.netfilter_samples = fab, .cpu_seconds = 10};
	pr->reference[p][i] =
	    (struct bench_profile_run){.netfilter_samples = ref, .cpu_seconds = 10};
}

static void test_profile_report(void)
{
	struct bench_profile pr = {.available = true, .streams = 1, .n_pairs = 3};
	struct bench_profile_path x;
	char *text = NULL;
	size_t len = 0;
	json_t *o, *q;
	FILE *f;

	/* raw: own 1.0, 1.5, 0.5 %; plain: 4, 5, 3.5 %; secure: 1, 4, -0.5 % */
	set_pair(&pr, BENCH_RAW, 0, 480, 80);
	set_pair(&pr, BENCH_RAW, 1, 680, 80);
	set_pair(&pr, BENCH_RAW, 2, 280, 80);
	set_pair(&pr, BENCH_PLAIN, 0, 1700, 100);
	set_pair(&pr, BENCH_PLAIN, 1, 2100, 100);
	set_pair(&pr, BENCH_PLAIN, 2, 1500, 100);
	set_pair(&pr, BENCH_SECURE, 0, 500, 100);
	set_pair(&pr, BENCH_SECURE, 1, 1700, 100);
	set_pair(&pr, BENCH_SECURE, 2, 100, 300);
	bench_profile_path_of(&pr, BENCH_RAW, &x);
	CHECK(NEAR(x.own.median, 1.0) && NEAR(x.own.min, 0.5) && NEAR(x.own.max, 1.5),
	      "raw own %g %g-%g", x.own.median, x.own.min, x.own.max);
	CHECK(NEAR(x.fabricd.median, 1.2) && NEAR(x.reference.median, 0.2), "raw shares");
	CHECK_INT(x.fabricd_samples, 1440, "raw samples");
	CHECK_INT(x.verdict, BENCH_WITHIN, "raw within 3%%");
	bench_profile_path_of(&pr, BENCH_PLAIN, &x);
	CHECK_INT(x.verdict, BENCH_OUTSIDE, "plain over 3%% in every pair");
	bench_profile_path_of(&pr, BENCH_SECURE, &x);
	CHECK(NEAR(x.own.min, -0.5) && NEAR(x.own.median, 1.0), "a cheaper pair stays negative");
	CHECK_INT(x.verdict, BENCH_UNDECIDED, "secure: pairs on both sides of 3%%");
	/* a pair without busy time does not count */
	pr.fabricd[BENCH_RAW][2].cpu_seconds = 0;
	bench_profile_path_of(&pr, BENCH_RAW, &x);
	CHECK(x.own.n == 2 && NEAR(x.own.median, 1.25), "two pairs left: %g", x.own.median);

	f = open_memstream(&text, &len);
	bench_print_profile(&pr, f);
	fclose(f);
	CHECK(strstr(text, "sampled by perf in 3 more runs per path") != NULL, "%s", text);
	CHECK(strstr(text, "raw        1.45%      0.20%          1.25%  1.00-1.50       yes") !=
		  NULL,
	      "raw row in:\n%s", text);
	CHECK(strstr(text, "plain      4.25%      0.25%          4.00%  3.50-5.00       no") !=
		  NULL,
	      "plain row in:\n%s", text);
	CHECK(strstr(text, "0.25%          1.00%  -0.50-4.00      ?") != NULL, "secure row in:\n%s",
	      text);
	free(text);
	o = bench_profile_json(&pr);
	CHECK(json_is_true(json_object_get(o, "available")), "available");
	CHECK(json_is_null(json_object_get(o, "reason")), "no reason");
	CHECK_INT(json_integer_value(json_object_get(o, "period_ns")), BENCH_PROFILE_PERIOD_NS,
		  "period");
	q = json_array_get(json_object_get(o, "paths"), BENCH_PLAIN);
	CHECK_STR(json_string_value(json_object_get(q, "path")), "plain", "second path");
	CHECK(NEAR(json_real_value(json_object_get(json_object_get(q, "own_pct"), "max")), 5.0),
	      "own max");
	CHECK_STR(json_string_value(json_object_get(q, "verdict")), "outside", "verdict");
	CHECK_INT(json_integer_value(json_object_get(q, "reference_samples")), 300, "samples");
	json_decref(o);
}

int main(void)
{
	test_stat();
	test_ci();
	test_parsers();
	test_delta();
	test_iperf();
	test_trace();
	test_report();
	test_reference();
	test_profile_parse();
	test_profile_unavailable();
	test_profile_report();
	return unit_summary("test_bench_report");
}
