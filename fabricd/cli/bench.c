// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/bench.c - `fabricd bench`: its options. cli/main.c hands bench every
 * argument after the subcommand (bench's --json takes a FILE, unlike the
 * other commands' --json flag), so bench parses its own --wg-backend and
 * --verbose too. The work is in bench/bench.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/control_plane.h"
#include "cli/commands.h"
#include "cli/getopt_say.h"
#include "base/log.h"

#define DEFAULT_DURATION 5
#define DEFAULT_REPEAT	 3
#define QUICK_DURATION	 2
#define QUICK_REPEAT	 1

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: fabricd bench [--duration S] [--streams 1,4,8] [--repeat N] [--json FILE]\n"
	    "                     [--svg FILE] [--quick] [--wg-backend auto|kernel|userspace]\n"
	    "                     [--reference] [--verbose]\n"
	    "\n"
	    "Builds a two-node cluster in network namespaces with fabricd's own apply (one\n"
	    "plain zone, one secure zone) and measures with iperf3 three paths: the raw\n"
	    "underlay, plain VXLAN and VXLAN inside WireGuard, sampling CPU time, context\n"
	    "switches, softirqs and interrupts meanwhile. Needs root; removes everything it\n"
	    "built when it ends, also on Ctrl-C.\n"
	    "\n"
	    "  --duration S   seconds per iperf3 run (default %d)\n"
	    "  --streams L    comma-separated parallel stream counts (default 1,4,8)\n"
	    "  --repeat N     runs per path and stream count; figures are medians (default %d)\n"
	    "  --json FILE    the report for programs (schemas/bench.schema.json)\n"
	    "  --svg FILE     a chart: throughput and CPU seconds per GB per path\n"
	    "  --quick        %d s per run, %d repeat: checks the structure, not precision\n"
	    "  --wg-backend   which WireGuard to measure (default auto: the kernel's if any)\n"
	    "  --reference    also build the same lab by hand (ip, bridge, wg; no guard) and\n"
	    "                 report each path of fabricd's lab as a ratio to it; with perf\n"
	    "                 (Debian package linux-perf), also netfilter's share of the CPU\n"
	    "                 in both labs, sampled in up to 3 more runs per path and lab\n"
	    "\n"
	    "       fabricd bench --control-plane [--nodes N] [--vnis V] [--quick] [--json FILE]\n"
	    "\n"
	    "Builds one node's share of an N-node, V-VNI cluster (half plain, half secure\n"
	    "zones) in fresh namespaces, first with iproute2's batch mode (the reference),\n"
	    "then with fabricd: apply from empty, plan and apply with nothing to do, apply\n"
	    "after adding one vnet, down; prints each time, its ratio and peak RSS.\n"
	    "  --nodes N      nodes in the cluster (default %d; --quick: %d)\n"
	    "  --vnis V       vnets (default %d; --quick: %d)\n"
	    "  --json FILE    the report (schemas/bench-control-plane.schema.json)\n",
	    DEFAULT_DURATION, DEFAULT_REPEAT, QUICK_DURATION, QUICK_REPEAT, CP_DEFAULT_NODES,
	    CP_QUICK_NODES, CP_DEFAULT_VNIS, CP_QUICK_VNIS);
}

/* A whole number in min..max, or -1 with a message naming the option. */
static long parse_uint(const char *opt, const char *text, long min, long max)
{
	char *end;
	long v;

	v = strtol(text, &end, 10);
	if (!*text || *end || v < min || v > max) {
		log_error("bench: %s \"%s\": give a whole number from %ld to %ld", opt, text, min,
			  max);
		return -1;
	}
	return v;
}

static int parse_streams(const char *text, struct bench_opts *b)
{
	char copy[256], *tok, *save = NULL;

	snprintf(copy, sizeof(copy), "%s", text);
	b->n_streams = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v = parse_uint("--streams", tok, 1, BENCH_MAX_STREAMS);

		if (v < 0)
			return -1;
		if (b->n_streams == BENCH_MAX_STREAM_COUNTS) {
			log_error("bench: --streams \"%s\": at most %d stream counts", text,
				  BENCH_MAX_STREAM_COUNTS);
			return -1;
		}
		for (size_t i = 0; i < b->n_streams; i++) {
			if (b->streams[i] == (unsigned int)v) {
				log_error("bench: --streams \"%s\": %ld is given twice", text, v);
				return -1;
			}
		}
		b->streams[b->n_streams++] = (unsigned int)v;
	}
	if (!b->n_streams) {
		log_error("bench: --streams \"%s\": give stream counts such as 1,4,8", text);
		return -1;
	}
	return 0;
}

enum {
	OPT_DURATION = 256,
	OPT_STREAMS,
	OPT_REPEAT,
	OPT_JSON,
	OPT_SVG,
	OPT_QUICK,
	OPT_WG_BACKEND,
	OPT_CONTROL_PLANE,
	OPT_NODES,
	OPT_VNIS,
	OPT_REFERENCE,
};

static int parse_size(int c, const char *arg, struct bench_opts *b);

static int parse_backend(const char *arg, struct bench_opts *b)
{
	if (!strcmp(arg, "auto"))
		b->wg_backend = WG_CHOICE_AUTO;
	else if (!strcmp(arg, "kernel"))
		b->wg_backend = WG_CHOICE_KERNEL;
	else if (!strcmp(arg, "userspace"))
		b->wg_backend = WG_CHOICE_USERSPACE;
	else {
		log_error("bench: --wg-backend \"%s\": use auto, kernel or userspace", arg);
		return -1;
	}
	return 0;
}

/* The switch an option without argument turns on. */
static bool *flag_of(int c, struct bench_opts *b)
{
	return c == OPT_QUICK		? &b->quick
	       : c == OPT_CONTROL_PLANE ? &b->control_plane
					: &b->reference;
}

static const struct option bench_options[] = {
    {"duration", required_argument, NULL, OPT_DURATION},
    {"streams", required_argument, NULL, OPT_STREAMS},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"json", required_argument, NULL, OPT_JSON},
    {"svg", required_argument, NULL, OPT_SVG},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"wg-backend", required_argument, NULL, OPT_WG_BACKEND},
    {"control-plane", no_argument, NULL, OPT_CONTROL_PLANE},
    {"nodes", required_argument, NULL, OPT_NODES},
    {"vnis", required_argument, NULL, OPT_VNIS},
    {"reference", no_argument, NULL, OPT_REFERENCE},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse(int argc, char **argv, struct bench_opts *b)
{
	long duration = -1, repeat = -1;
	struct cli_seen seen = {0};
	int c;

	optind = 0; /* GNU: reinitialize */
	opterr = 0; /* a refused option is said in one line, below */
	while ((c = getopt_long(argc, argv, ":vh", bench_options, NULL)) != -1) {
		if (c != '?' && c != ':' && cli_once(&seen, bench_options, c, optarg) < 0)
			return -1;
		switch (c) {
		case OPT_DURATION:
			duration = parse_uint("--duration", optarg, 1, BENCH_MAX_DURATION);
			if (duration < 0)
				return -1;
			break;
		case OPT_STREAMS:
			if (parse_streams(optarg, b) < 0)
				return -1;
			break;
		case OPT_REPEAT:
			repeat = parse_uint("--repeat", optarg, 1, BENCH_MAX_REPEAT);
			if (repeat < 0)
				return -1;
			break;
		case OPT_JSON:
			b->json_path = optarg;
			break;
		case OPT_SVG:
			b->svg_path = optarg;
			break;
		case OPT_QUICK:
		case OPT_CONTROL_PLANE:
		case OPT_REFERENCE:
			*flag_of(c, b) = true;
			break;
		case OPT_WG_BACKEND:
			if (parse_backend(optarg, b) < 0)
				return -1;
			break;
		case OPT_NODES:
		case OPT_VNIS:
			if (parse_size(c, optarg, b) < 0)
				return -1;
			break;
		case 'v':
			b->verbose = true;
			log_set_verbose(true);
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			cli_bad_option("bench", c, argv, bench_options, "fabricd bench");
			return -1;
		}
	}
	if (optind < argc) {
		log_error("bench: unexpected argument \"%s\": see fabricd bench --help",
			  argv[optind]);
		return -1;
	}
	/* --quick sets the defaults; options given explicitly still win */
	b->duration = (unsigned int)(duration > 0 ? duration
				     : b->quick	  ? QUICK_DURATION
						  : DEFAULT_DURATION);
	b->repeat = (unsigned int)(repeat > 0 ? repeat : b->quick ? QUICK_REPEAT : DEFAULT_REPEAT);
	return 0;
}

static int parse_size(int c, const char *arg, struct bench_opts *b)
{
	long v = c == OPT_NODES ? parse_uint("--nodes", arg, 2, CP_MAX_NODES)
				: parse_uint("--vnis", arg, 2, CP_MAX_VNIS);

	if (v < 0)
		return -1;
	if (c == OPT_NODES)
		b->nodes = (unsigned int)v;
	else
		b->vnis = (unsigned int)v;
	return 0;
}

/* --control-plane: --quick picks the small size; --nodes and --vnis still win. */
static int control_plane(const struct bench_opts *b)
{
	struct cp_opts o = {
	    .nodes = b->nodes	? b->nodes
		     : b->quick ? CP_QUICK_NODES
				: CP_DEFAULT_NODES,
	    .vnis = b->vnis    ? b->vnis
		    : b->quick ? CP_QUICK_VNIS
			       : CP_DEFAULT_VNIS,
	    .quick = b->quick,
	    .verbose = b->verbose,
	    .json_path = b->json_path,
	    .wg_backend = b->wg_backend,
	};

	if (b->svg_path) {
		log_error("bench: --svg is for the data-plane bench, not --control-plane");
		return 1;
	}
	return cp_main(&o);
}

int cmd_bench(const struct options *o)
{
	struct bench_opts b = {
	    .streams = {1, 4, 8},
	    .n_streams = 3,
	    .wg_backend = o->wg_backend,
	    .verbose = o->verbose,
	};
	char *args[64];
	int argc = 0, ret;

	/* getopt wants a program name first */
	args[argc++] = "fabricd bench";
	for (int i = 0; i < o->argc && argc < 63; i++)
		args[argc++] = o->argv[i];
	args[argc] = NULL;
	if (o->argc > 62) {
		log_error("bench: too many arguments");
		return 1;
	}
	ret = parse(argc, args, &b);
	if (ret)
		return ret < 0 ? 1 : 0;
	if (b.control_plane)
		return control_plane(&b);
	if (b.nodes || b.vnis) {
		log_error("bench: --nodes and --vnis go with --control-plane");
		return 1;
	}
	return bench_main(&b);
}
