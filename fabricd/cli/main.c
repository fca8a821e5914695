// SPDX-License-Identifier: GPL-2.0-or-later
/* cli/main.c - the subcommand table and option parsing; all work is in cmd_*.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "base/log.h"

static const struct {
	const char *name;
	int (*fn)(const struct options *o);
	const char *description;
} subcommands[] = {
    {"check", cmd_check, "validate a cluster definition"},
    {"render", cmd_render, "print the objects a node should have (no kernel access)"},
    {"plan", cmd_plan, "print the changes apply would make (exit 2 when there are some)"},
    {"apply", cmd_apply, "converge this node to the definition"},
    {"run", cmd_run, "converge, then follow the definition and the kernel"},
    {"set-transport", cmd_set_transport, "switch a zone in the definition file: ZONE plain|secure"},
    {"status", cmd_status, "show the fabric, zones, vnets and drift"},
    {"down", cmd_down, "remove every object fabricd owns on this node"},
    {"genkey", cmd_genkey, "print a new base64 private key"},
    {"pubkey", cmd_pubkey, "read a private key on stdin, print its public key"},
    {"bench", cmd_bench, "measure plain VXLAN against VXLAN in WireGuard"},
    {"import-pve", cmd_import_pve, "write a definition from Proxmox VE's SDN configuration"},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fabricd COMMAND [-c FILE] [-n NODE] [--key-file FILE] [--psk-dir DIR]\n"
		"                       [--wg-backend auto|kernel|userspace] [--json] [--verbose]\n"
		"                       [--grace SECONDS] [--ifupdown-file FILE]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-13s %s\n", subcommands[i].name, subcommands[i].description);
}

enum {
	OPT_KEY_FILE = 256,
	OPT_PSK_DIR,
	OPT_WG_BACKEND,
	OPT_JSON,
	OPT_GRACE,
	OPT_IFUPDOWN_FILE,
};

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option long_opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"node", required_argument, NULL, 'n'},
	    {"key-file", required_argument, NULL, OPT_KEY_FILE},
	    {"psk-dir", required_argument, NULL, OPT_PSK_DIR},
	    {"wg-backend", required_argument, NULL, OPT_WG_BACKEND},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"verbose", no_argument, NULL, 'v'},
	    {"grace", required_argument, NULL, OPT_GRACE},
	    {"ifupdown-file", required_argument, NULL, OPT_IFUPDOWN_FILE},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	char *end;

	/* "+": stop at the first positional so subcommands may take their own */
	while ((c = getopt_long(argc, argv, "+c:n:vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'n':
			o->node = optarg;
			break;
		case OPT_KEY_FILE:
			o->key_file = optarg;
			break;
		case OPT_PSK_DIR:
			o->psk_dir = optarg;
			break;
		case OPT_WG_BACKEND:
			if (!strcmp(optarg, "auto")) {
				o->wg_backend = WG_CHOICE_AUTO;
			} else if (!strcmp(optarg, "kernel")) {
				o->wg_backend = WG_CHOICE_KERNEL;
			} else if (!strcmp(optarg, "userspace")) {
				o->wg_backend = WG_CHOICE_USERSPACE;
			} else {
				log_error("--wg-backend \"%s\": use auto, kernel or userspace",
					  optarg);
				return -1;
			}
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'v':
			o->verbose = true;
			log_set_verbose(true);
			break;
		case OPT_GRACE:
			o->grace = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || !*optarg || o->grace > 86400) {
				log_error("--grace \"%s\": give whole seconds, 0..86400", optarg);
				return -1;
			}
			break;
		case OPT_IFUPDOWN_FILE:
			o->ifupdown_file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	return optind;
}

int main(int argc, char **argv)
{
	struct options o = {
	    .config = FABRICD_DEFAULT_CONFIG,
	    .key_file = FABRICD_DEFAULT_KEY_FILE,
	    .wg_backend = WG_CHOICE_AUTO,
	    .grace = 30,
	};
	const char *name;
	int first;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 1 : 0;
	}
	name = argv[1];
	/* bench parses its own options (its --json takes a FILE): hand it all of them */
	if (!strcmp(name, "bench")) {
		o.argc = argc - 2;
		o.argv = argv + 2;
		return cmd_bench(&o);
	}
	/* import-pve has options of its own (-o, --sdn-dir, ...) */
	if (!strcmp(name, "import-pve")) {
		o.argc = argc - 1;
		o.argv = argv + 1;
		return cmd_import_pve(&o);
	}
	/* options may come after the subcommand: "fabricd apply -c FILE -n NODE" */
	first = parse_options(argc - 1, argv + 1, &o);
	if (first < 0)
		return 1;
	o.argc = argc - 1 - first;
	o.argv = argv + 1 + first;
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (!strcmp(name, subcommands[i].name))
			return subcommands[i].fn(&o);
	}
	log_error("unknown command \"%s\": see fabricd --help", name);
	return 1;
}
