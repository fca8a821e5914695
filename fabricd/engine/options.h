/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.h - what a node command was asked to do: filled in by cli/main.c
 * from the command line, read by the engine, the daemon and the bench.
 */
#ifndef FABRICD_OPTIONS_H
#define FABRICD_OPTIONS_H

#include <stdbool.h>

#include "kmod/probe.h"

#define FABRICD_DEFAULT_CONFIG	 "/etc/fabricd/cluster.json"
#define FABRICD_DEFAULT_KEY_FILE "/etc/fabricd/private.key"

struct options {
	const char *config;   /* -c FILE */
	const char *node;     /* -n NODE, default: hostname */
	const char *key_file; /* --key-file */
	const char *psk_dir;  /* --psk-dir */
	enum wg_backend_choice wg_backend;
	bool json;
	bool verbose;
	unsigned int grace; /* seconds an old VXLAN device keeps receiving after a switch */
	const char *ifupdown_file; /* --ifupdown-file, NULL: the default (engine/ifupdown.h) */
	int argc;	    /* positional arguments after the subcommand */
	char **argv;
};

#endif
