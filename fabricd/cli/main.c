// SPDX-License-Identifier: GPL-2.0-or-later
/* cli/main.c - the subcommand table and option parsing; all work is in cmd_*.c. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/getopt_say.h"
#include "base/log.h"
#include "base/util.h"
#include "engine/lock.h"
#include "engine/resolve.h"
#include "version.h"
#include "engine/frr.h"
#include "netlink/nl.h"
#include "wireguard/genl.h"

/* What each command reads besides options: positional arguments, and --json. */
enum { TAKES_ARGS = 1, WRITES_JSON = 2 };

static const struct {
	const char *name;
	int (*fn)(const struct options *o);
	unsigned int reads; /* TAKES_ARGS | WRITES_JSON */
	const char *description;
} subcommands[] = {
    {"check", cmd_check, WRITES_JSON, "validate a cluster definition"},
    {"render", cmd_render, WRITES_JSON, "print the objects a node should have (no kernel access)"},
    {"plan", cmd_plan, WRITES_JSON,
     "print the changes apply would make (exit 2 when there are some)"},
    {"apply", cmd_apply, 0, "converge this node to the definition"},
    {"run", cmd_run, 0, "converge, then follow the definition and the kernel"},
    {"set-transport", cmd_set_transport, TAKES_ARGS,
     "switch a zone in the definition file: ZONE plain|secure"},
    {"status", cmd_status, WRITES_JSON, "show the fabric, zones, vnets and drift"},
    {"down", cmd_down, 0, "remove every object fabricd owns on this node"},
    {"genkey", cmd_genkey, 0, "print a new base64 private key"},
    {"pubkey", cmd_pubkey, 0, "print the public key of a private key (stdin, or --key-file)"},
    {"bench", cmd_bench, 0, "measure plain VXLAN against VXLAN in WireGuard"},
    {"init", cmd_init, 0, "create a definition with this node: --cluster NAME --prefix CIDR"},
    {"join", cmd_join, 0, "add this node to a definition (first free fabric address)"},
    {"leave", cmd_leave, 0, "remove this node from a definition and its zones"},
    {"zone", cmd_zone, 0, "add or remove a zone in the definition: add|remove ZONE"},
    {"vnet", cmd_vnet, 0, "add or remove vnets in the definition: add|remove NAME[:VNI]"},
    {"import-pve", cmd_import_pve, 0, "write a definition from Proxmox VE's SDN configuration"},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fabricd COMMAND [-c FILE] [-n NODE] [--key-file FILE]\n"
		"                       [--wg-backend auto|kernel|userspace] [--json] [--verbose]\n"
		"                       [--lock-wait SECONDS] [--frr-pathspace NAME]\n"
		"       fabricd init -c FILE --cluster NAME --prefix CIDR [--listen-port N]\n"
		"                    [-n NODE] [--underlay ADDR] [--key-file FILE]\n"
		"       fabricd join -c FILE [-n NODE] [--underlay ADDR] [--key-file FILE] "
		"[--rotate-key]\n"
		"       fabricd leave -c FILE [-n NODE]\n"
		"       fabricd zone add -c FILE ZONE --transport plain|secure "
		"[--vnet NAME:VNI]... [--nodes NODE,...] [--pve-zone ID]\n"
		"       fabricd zone remove -c FILE ZONE\n"
		"       fabricd vnet add -c FILE --zone ZONE NAME:VNI...\n"
		"       fabricd vnet remove -c FILE NAME...\n"
		"       fabricd import-pve [--sdn-dir DIR] [--pending] [--corosync FILE] [-o FILE] "
		"[--partial] ... (fabricd import-pve --help)\n"
		"       fabricd --version\n"
		"  -c FILE: default " FABRICD_DEFAULT_CONFIG "\n"
		"  options may stand before COMMAND too: fabricd -c FILE check\n"
		"  run:    [--metrics ADDR:PORT] [--metrics-file PATH [--metrics-file-interval "
		"SECONDS]]\n"
		"          [--probe-interval SECONDS] [--probe-file PATH]\n"
		"  run, plan, apply, down, status, render: [--sdn-dir DIR [--corosync FILE]]\n"
		"          (the definition from Proxmox SDN instead of -c FILE)\n"
		"  status: [--dot | --svg] [--probe-file PATH]\n"
		"  down:   [--probe-file PATH] (removed with the fabric)\n"
		"  run, apply, plan (and status for --grace): [--psk-dir DIR] [--grace SECONDS]\n"
		"  apply, plan, status: [--end-grace ZONE[,ZONE...]] (those zones' switches end "
		"now)\n"
		"  run, apply, down: [--ifupdown-file FILE]\n"
		"  down:   [--cluster NAME] (without a definition: what cluster NAME's fabricd "
		"owns)\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-13s %s\n", subcommands[i].name, subcommands[i].description);
}

enum {
	OPT_WG_BACKEND = 256,
	OPT_GRACE,
	OPT_LOCK_WAIT,
	OPT_PROBE_INTERVAL,
	OPT_METRICS_FILE_INTERVAL,
	OPT_FRR_PATHSPACE,
	OPT_IFUPDOWN_FILE,
	OPT_VALUE_BASE = 512, /* + index into value_options[] */
};

/*
 * Options that only store their argument (const char *) or set a flag
 * (bool) in struct options: one line each, checked by the command that reads them.
 */
static const struct value_option {
	const char *name;
	int has_arg; /* required_argument: a const char * field; no_argument: a bool */
	size_t offset;
} value_options[] = {
    {"key-file", required_argument, offsetof(struct options, key_file)},
    {"psk-dir", required_argument, offsetof(struct options, psk_dir)},
    {"json", no_argument, offsetof(struct options, json)},
    {"metrics", required_argument, offsetof(struct options, metrics_listen)},
    {"metrics-file", required_argument, offsetof(struct options, metrics_file)},
    {"probe-file", required_argument, offsetof(struct options, probe_file)},
    {"dot", no_argument, offsetof(struct options, dot)},
    {"svg", no_argument, offsetof(struct options, svg)},
    {"cluster", required_argument, offsetof(struct options, cluster_name)},
    {"prefix", required_argument, offsetof(struct options, prefix)},
    {"listen-port", required_argument, offsetof(struct options, listen_port)},
    {"underlay", required_argument, offsetof(struct options, underlay)},
    {"rotate-key", no_argument, offsetof(struct options, rotate_key)},
    {"sdn-dir", required_argument, offsetof(struct options, sdn_dir)},
    {"corosync", required_argument, offsetof(struct options, corosync)},
    {"end-grace", required_argument, offsetof(struct options, end_grace)},
};
#define N_VALUE_OPTIONS (sizeof(value_options) / sizeof(value_options[0]))

static int set_value_option(struct options *o, const struct value_option *v, char *arg)
{
	char *field = (char *)o + v->offset;

	if (v->has_arg == no_argument) {
		*(bool *)field = true;
	} else if (!arg[0]) {
		/* an unset shell variable: "--key-file $KEY" would name no file */
		log_error("--%s \"\": give a value", v->name);
		return -1;
	} else {
		*(const char **)field = arg;
	}
	return 0;
}

/* -c FILE. 0, or -1 (said) for an empty one. */
static int take_config(struct options *o, const char *arg)
{
	if (!arg[0]) {
		log_error("-c \"\": give the definition file's path");
		return -1;
	}
	o->config = arg;
	o->config_given = true;
	return 0;
}

/*
 * Seconds, fractions allowed, min..3600 (or 0 where zero_ok) for option name,
 * into ms; -1 (logged, with hint) otherwise.
 */
static int parse_interval(const char *name, const char *text, double min, bool zero_ok,
			  const char *hint, unsigned int *ms)
{
	char *end;
	double s = strtod(text, &end);

	if (*end || !*text || !((zero_ok && s == 0) || (s >= min && s <= 3600))) {
		log_error("%s \"%s\": give seconds, %g..3600 (%s)", name, text, min, hint);
		return -1;
	}
	*ms = (unsigned int)(s * 1000 + 0.5);
	return 0;
}

/*
 * --probe-interval (tests probe faster; 0 turns the rounds off) or
 * --metrics-file-interval (node_exporter reads the file only when Prometheus
 * scrapes, every 15-60 s), c, into o. 0, or -1 (said).
 */
static int take_interval(struct options *o, int c, const char *arg)
{
	char hint[32];

	if (c == OPT_PROBE_INTERVAL) {
		o->probe_interval_given = true;
		return parse_interval("--probe-interval", arg, 0.1, true, "0: no probes",
				      &o->probe_interval_ms);
	}
	o->metrics_file_interval_given = true;
	snprintf(hint, sizeof(hint), "default %u", FABRICD_DEFAULT_METRICS_FILE_INTERVAL_MS / 1000);
	return parse_interval("--metrics-file-interval", arg, 0.5, false, hint,
			      &o->metrics_file_interval_ms);
}

/* Whole seconds 0..max for option name; -1 (logged) otherwise. */
int cli_parse_seconds(const char *name, const char *text, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v = strtoul(text, &end, 10);

	if (*end || !*text || v > max) {
		log_error("--%s \"%s\": give whole seconds, 0..%u", name, text, max);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

static int parse_wg_backend(const char *text, enum wg_backend_choice *out)
{
	if (!strcmp(text, "auto"))
		*out = WG_CHOICE_AUTO;
	else if (!strcmp(text, "kernel"))
		*out = WG_CHOICE_KERNEL;
	else if (!strcmp(text, "userspace"))
		*out = WG_CHOICE_USERSPACE;
	else {
		log_error("--wg-backend \"%s\": use auto, kernel or userspace", text);
		return -1;
	}
	return 0;
}

/* fixed, then value_options[], then the terminator, into out */
static void join_options(struct option *out, const struct option *fixed, size_t n_fixed)
{
	memcpy(out, fixed, n_fixed * sizeof(*fixed));
	for (size_t i = 0; i < N_VALUE_OPTIONS; i++)
		out[n_fixed + i] = (struct option){value_options[i].name, value_options[i].has_arg,
						   NULL, OPT_VALUE_BASE + (int)i};
	out[n_fixed + N_VALUE_OPTIONS] = (struct option){NULL, 0, NULL, 0};
}

/* The options with code of their own in parse_options(); value_options[] join them. */
static const struct option fixed_opts[] = {
    {"config", required_argument, NULL, 'c'},
    {"node", required_argument, NULL, 'n'},
    {"wg-backend", required_argument, NULL, OPT_WG_BACKEND},
    {"verbose", no_argument, NULL, 'v'},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"lock-wait", required_argument, NULL, OPT_LOCK_WAIT},
    {"probe-interval", required_argument, NULL, OPT_PROBE_INTERVAL},
    {"metrics-file-interval", required_argument, NULL, OPT_METRICS_FILE_INTERVAL},
    {"frr-pathspace", required_argument, NULL, OPT_FRR_PATHSPACE},
    {"ifupdown-file", required_argument, NULL, OPT_IFUPDOWN_FILE},
    {"help", no_argument, NULL, 'h'},
};
#define N_FIXED_OPTIONS (sizeof(fixed_opts) / sizeof(fixed_opts[0]))
#define N_LONG_OPTIONS	(N_FIXED_OPTIONS + N_VALUE_OPTIONS + 1)

bool cli_shared_option(const char *word)
{
	struct option long_opts[N_LONG_OPTIONS];
	bool letter = word[0] == '-' && word[1] && word[1] != '-';
	size_t len = letter ? 0 : strcspn(word + 2, "=");

	if (word[0] != '-' || !word[1])
		return false;
	join_options(long_opts, fixed_opts, N_FIXED_OPTIONS);
	for (const struct option *l = long_opts; l->name; l++) {
		bool named = letter ? l->val == (unsigned char)word[1]
				    : strlen(l->name) == len && !strncmp(l->name, word + 2, len);

		if (named)
			return l->val != 'h';
	}
	return false;
}

static bool known_command(const char *name)
{
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (!strcmp(name, subcommands[i].name))
			return true;
	}
	return false;
}

/*
 * "fabricd -c FILE check": options before the command move after it, where
 * the command's parser reads them ("fabricd check -c FILE"); argv is
 * reordered in place. 0; 1 for --help and no command; or -1 (said) where no
 * command follows them, or one is not fabricd's or lacks its value (so where
 * the options end is unknown).
 */
static int command_first(int argc, char **argv)
{
	struct option long_opts[N_LONG_OPTIONS];
	bool help = false;
	char *name;
	int c, at;

	join_options(long_opts, fixed_opts, N_FIXED_OPTIONS);
	opterr = 0;
	optind = 0;
	/* '+': stop at the first word that is not an option, the command; ':': say it here */
	while ((c = getopt_long(argc, argv, "+:c:n:vh", long_opts, NULL)) != -1) {
		help |= c == 'h';
		if (c != '?' && c != ':')
			continue;
		log_error("\"%s\" before the command: %s; give the command first: fabricd "
			  "COMMAND [OPTIONS] (see fabricd --help)",
			  argv[optind - 1],
			  c == ':' ? "it needs a value" : "not an option every command shares");
		return -1;
	}
	at = optind;
	/* the next getopt_long() starts afresh, in its own order ("set-transport Z plain -c F") */
	opterr = 1;
	optind = 0;
	if (at >= argc && help)
		return 1;
	if (at >= argc) {
		log_error("no command after \"%s\": give one, such as fabricd check -c FILE (see "
			  "fabricd --help)",
			  argv[argc - 1]);
		return -1;
	}
	name = argv[at];
	if (!known_command(name)) {
		/* "fabricd --json FILE bench": before the command --json is the flag */
		bool value = at + 1 < argc && known_command(argv[at + 1]);

		log_error("unknown command \"%s\" after \"%s\"%s%s%s (see fabricd --help)", name,
			  argv[at - 1],
			  value ? ": options before the command take no value of " : "",
			  value ? argv[at + 1] : "", value ? "'s own; give them after it" : "");
		return -1;
	}
	memmove(&argv[2], &argv[1], (size_t)(at - 1) * sizeof(*argv));
	argv[1] = name;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	struct option long_opts[N_LONG_OPTIONS];
	struct cli_seen seen = {0};
	int c;

	join_options(long_opts, fixed_opts, N_FIXED_OPTIONS);

	/* options and arguments in any order: "set-transport ZONE secure --grace 0" */
	opterr = 0; /* a refused option is said in one line, below */
	while ((c = getopt_long(argc, argv, ":c:n:vh", long_opts, NULL)) != -1) {
		/* `-n pve1 -n pve2`: the last one won unseen */
		if (c != '?' && c != ':' && cli_once(&seen, long_opts, c, optarg) < 0)
			return -1;
		switch (c) {
		case 'c':
			if (take_config(o, optarg) < 0)
				return -1;
			break;
		case 'n':
			o->node = optarg;
			break;
		case OPT_WG_BACKEND:
			if (parse_wg_backend(optarg, &o->wg_backend) < 0)
				return -1;
			o->wg_backend_given = true;
			break;
		case 'v':
			o->verbose = true;
			log_set_verbose(true);
			break;
		case OPT_GRACE:
			if (cli_parse_seconds("grace", optarg, 86400, &o->grace) < 0)
				return -1;
			o->grace_given = true;
			break;
		case OPT_LOCK_WAIT:
			o->lock_wait_given = true;
			if (cli_parse_seconds("lock-wait", optarg, 3600, &o->lock_wait) < 0)
				return -1;
			break;
		case OPT_PROBE_INTERVAL:
		case OPT_METRICS_FILE_INTERVAL:
			if (take_interval(o, c, optarg) < 0)
				return -1;
			break;
		case OPT_FRR_PATHSPACE:
			if (frr_pathspace_check(optarg) < 0)
				return -1;
			o->frr_pathspace = optarg;
			break;
		case OPT_IFUPDOWN_FILE:
			o->ifupdown_file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(cli_exit_status(0));
		default:
			if (c >= OPT_VALUE_BASE && c < OPT_VALUE_BASE + (int)N_VALUE_OPTIONS) {
				if (set_value_option(o, &value_options[c - OPT_VALUE_BASE],
						     optarg) < 0)
					return -1;
				o->key_file_given |= value_options[c - OPT_VALUE_BASE].offset ==
						     offsetof(struct options, key_file);
				break;
			}
			cli_bad_option(argv[0], c, argv, long_opts, "fabricd");
			return -1;
		}
	}
	return optind;
}

/* The commands that may take the definition from Proxmox (--sdn-dir) instead of -c FILE. */
static bool reads_definition_only(const char *name)
{
	static const char *const names[] = {"run", "plan", "apply", "down", "status", "render"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* genkey and pubkey: a key in, a key out; no definition, node or backend. */
static bool key_command(const char *name)
{
	return !strcmp(name, "genkey") || !strcmp(name, "pubkey");
}

/*
 * A command given an argument or --json it does not read fails rather than
 * ignoring it: "check FILE" would otherwise check the default file.
 */
static bool reads_what_was_given(const char *name, unsigned int reads, const struct options *o)
{
	if (o->argc > 0 && !(reads & TAKES_ARGS)) {
		log_error("%s: unexpected argument \"%s\": %s takes options only (%s); see "
			  "fabricd --help",
			  name, o->argv[0], name,
			  !strcmp(name, "genkey") ? "it prints a new private key"
			  : !strcmp(name, "pubkey")
			      ? "the private key from stdin or --key-file"
			      : "the definition with -c FILE, the node with -n NODE");
		return false;
	}
	if (o->json && !(reads & WRITES_JSON)) {
		log_error("%s: --json is not an output of %s; check, render, plan and status "
			  "have one (fabricd status --json shows a node after a change)",
			  name, name);
		return false;
	}
	return true;
}

/*
 * Where the definition comes from: -c FILE, or --sdn-dir DIR [--corosync
 * FILE], or for down --cluster NAME; one given where another is read is
 * refused, or said (a warning) where it is harmless.
 */
static bool definition_source_fits(const char *name, const struct options *o)
{
	/* down --cluster is the way out when the definition is lost or broken: never read */
	if (o->cluster_name && !strcmp(name, "down") && (o->config_given || o->sdn_dir))
		log_warn("down: --cluster %s names the cluster, so %s is not read: down removes "
			 "what fabricd owns for cluster %s on this node",
			 o->cluster_name, o->sdn_dir ? "--sdn-dir" : o->config, o->cluster_name);
	if (o->corosync && !o->sdn_dir && reads_definition_only(name)) {
		log_error("%s: --corosync goes with --sdn-dir DIR (the definition from Proxmox); "
			  "without it %s reads -c FILE and would ignore --corosync",
			  name, name);
		return false;
	}
	/* the definition comes from Proxmox: a -c FILE beside it was ignored without a word */
	if (o->sdn_dir && o->config_given && !o->cluster_name && reads_definition_only(name))
		log_warn("%s: --sdn-dir takes the definition from Proxmox's SDN configuration, so "
			 "-c %s is not read; leave -c out",
			 name, o->config);
	if ((o->sdn_dir || o->corosync) && !reads_definition_only(name)) {
		log_error("%s: --sdn-dir and --corosync are for run, plan, apply, down, status and "
			  "render (the definition from Proxmox's SDN configuration); %s works on a "
			  "definition file (-c FILE, which `fabricd import-pve -o FILE` writes)",
			  name, name);
		return false;
	}
	return true;
}

/* Options that only some commands read: an error where they would be ignored. */
static bool options_fit(const char *name, const struct options *o)
{
	const struct {
		bool given;
		const char *what, *commands, *who; /* commands: " cmd cmd ", who reads it */
	} only[] = {
	    {o->dot || o->svg, "--dot and --svg are", " status ", "status"},
	    {o->metrics_listen || o->metrics_file, "--metrics and --metrics-file are", " run ",
	     "run"},
	    {o->probe_file != NULL, "--probe-file is", " run status down ",
	     "run, status and down (which removes it)"},
	    {o->prefix || o->listen_port, "--prefix and --listen-port are", " init ",
	     "init (the new cluster's fabric)"},
	    {o->underlay != NULL, "--underlay is", " init join ", "init and join"},
	    {o->rotate_key, "--rotate-key is", " join ", "join"},
	    {o->probe_interval_given, "--probe-interval is", " run ", "run"},
	    {o->metrics_file_interval_given, "--metrics-file-interval is", " run ",
	     "run (with --metrics-file)"},
	    {o->grace_given, "--grace is", " run apply plan status ",
	     "run, apply, plan and status (a transport switch's grace period)"},
	    {o->end_grace != NULL, "--end-grace is", " apply plan status ",
	     "apply, plan and status (a daemon would end each later switch of those zones at "
	     "once too; `run --grace 0` does that for every zone)"},
	    {o->psk_dir != NULL, "--psk-dir is", " run apply plan ", "run, apply and plan"},
	    {o->ifupdown_file != NULL, "--ifupdown-file is", " run apply down ",
	     "run, apply and down (which write it)"},
	    {o->lock_wait_given, "--lock-wait is", " run apply down set-transport init join leave ",
	     "the commands that change a node or edit the definition (run, apply, down, "
	     "set-transport, init, join, leave, zone, vnet)"},
	    {o->frr_pathspace != NULL, "--frr-pathspace is", " run apply plan status down ",
	     "the commands that read or change FRR (run, apply, plan, status, down)"},
	    /* genkey and pubkey: said below, with what they read instead */
	    {o->key_file_given, "--key-file is", " run apply plan status init join pubkey genkey ",
	     "the commands that read or write this node's private key (run, apply, plan, status, "
	     "init, join, pubkey)"},
	    {o->wg_backend_given, "--wg-backend is", " run apply plan status down genkey pubkey ",
	     "the commands that build or read the fabric device (run, apply, plan, status, down; "
	     "bench has its own)"},
	};
	char padded[64];

	snprintf(padded, sizeof(padded), " %s ", name);
	for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++) {
		if (only[i].given && !strstr(only[i].commands, padded)) {
			log_error("%s: %s for %s only; %s would ignore it", name, only[i].what,
				  only[i].who, name);
			return false;
		}
	}
	/* run would ignore it: there is no file to write */
	if (o->metrics_file_interval_given && !o->metrics_file && !strcmp(name, "run")) {
		log_error("run: --metrics-file-interval is how often --metrics-file is written; "
			  "give --metrics-file PATH too, or leave the interval out");
		return false;
	}
	/* genkey prints: a --key-file it ignored left no file and the key on the screen */
	if (o->key_file_given && !strcmp(name, "genkey")) {
		log_error(
		    "genkey: --key-file is not read by genkey; it prints the key: write the "
		    "file with (umask 077; fabricd genkey > FILE), or let `fabricd join` make "
		    "it");
		return false;
	}
	if (key_command(name) &&
	    (o->config_given || o->node || o->wg_backend_given || o->cluster_name)) {
		log_error("%s: -c, -n, --wg-backend and --cluster are not read by %s: it reads "
			  "%s and prints a key",
			  name, name, strcmp(name, "genkey") ? "a private key" : "nothing");
		return false;
	}
	if (o->cluster_name && strcmp(name, "init") && strcmp(name, "down")) {
		log_error("%s: --cluster is for init (the new cluster's name) and down (without a "
			  "definition); %s reads the cluster from -c FILE",
			  name, name);
		return false;
	}
	return definition_source_fits(name, o);
}

/*
 * --help, help and --version: their exit status; otherwise -1, with argv's
 * command first (see command_first()), or 1 (said) where it cannot be.
 */
static int help_version_or_command_first(int argc, char **argv)
{
	int moved;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 1 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		if (argc > 2) {
			log_error("--version takes nothing after it (\"%s\")", argv[2]);
			return 1;
		}
		printf("fabricd %s\n", FABRICD_VERSION);
		return 0;
	}
	if (argv[1][0] != '-' || !argv[1][1])
		return -1;
	moved = command_first(argc, argv);
	if (moved > 0)
		usage(stdout);
	return moved == 0 ? -1 : moved > 0 ? 0 : 1;
}

static int run_command(int argc, char **argv)
{
	struct options o = {
	    .config = FABRICD_DEFAULT_CONFIG,
	    .key_file = FABRICD_DEFAULT_KEY_FILE,
	    .wg_backend = WG_CHOICE_AUTO,
	    .grace = 30,
	    .lock_wait = NODE_LOCK_WAIT_S,
	    .probe_interval_ms = 10000,
	    .metrics_file_interval_ms = FABRICD_DEFAULT_METRICS_FILE_INTERVAL_MS,
	};
	char probe_file[128];
	const char *name;
	int first;

	first = help_version_or_command_first(argc, argv);
	if (first >= 0)
		return first;
	name = argv[1];
	/* bench parses its own options (its --json takes a FILE): hand it all of them */
	if (!strcmp(name, "bench")) {
		o.argc = argc - 2;
		o.argv = argv + 2;
		return cmd_bench(&o);
	}
	/* import-pve, zone and vnet have options of their own (-o, --sdn-dir, --vnet, ...) */
	if (!strcmp(name, "import-pve") || !strcmp(name, "zone") || !strcmp(name, "vnet")) {
		o.argc = argc - 1;
		o.argv = argv + 1;
		return !strcmp(name, "zone")   ? cmd_zone(&o)
		       : !strcmp(name, "vnet") ? cmd_vnet(&o)
					       : cmd_import_pve(&o);
	}
	/* options may come after the subcommand: "fabricd apply -c FILE -n NODE" */
	first = parse_options(argc - 1, argv + 1, &o);
	if (first < 0 || !options_fit(name, &o))
		return 1;
	if (!o.probe_file) {
		/* per namespace: simulated nodes on one host keep their own */
		snprintf(probe_file, sizeof(probe_file), FABRICD_DEFAULT_PROBE_FILE, netns_inode());
		o.probe_file = probe_file;
	}
	o.argc = argc - 1 - first;
	o.argv = argv + 1 + first;
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (!strcmp(name, subcommands[i].name)) {
			unsigned int genl_opened, genl_resolved;
			int ret;

			if (!reads_what_was_given(name, subcommands[i].reads, &o))
				return 1;
			ret = subcommands[i].fn(&o);
			resolve_cache_free();
			wg_genl_counts(&genl_opened, &genl_resolved);
			log_debug("netlink: %u rtnetlink socket(s), %u generic netlink socket(s) "
				  "opened; the wireguard family resolved %u time(s)",
				  nl_route_shared_opened(), genl_opened, genl_resolved);
			wg_genl_close();
			nl_route_shared_close();
			return ret;
		}
	}
	log_error("unknown command \"%s\": see fabricd --help", name);
	return 1;
}

/*
 * What a command printed reaches stdout only now (it is buffered): a full
 * disk or a closed pipe must not leave a truncated --json behind an exit
 * status of 0.
 */
int cli_exit_status(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		log_error("stdout: %s: the output is incomplete", strerror(errno ? errno : EIO));
		return 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	int ret;

	/*
	 * Private and preshared keys pass through every command's memory (the
	 * daemon keeps them): no core file of it, and no other user's ptrace or
	 * /proc/PID/mem, whatever the system's core settings.
	 */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	ret = run_command(argc, argv);
	return cli_exit_status(ret);
}
